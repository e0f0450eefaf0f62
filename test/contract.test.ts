// Contract tests: start the real server on an ephemeral port and replay every response example
// of openapi/v1.yaml, discovered from the spec itself (adding an example adds a test). Each
// example's status, body schema, headers and — except its x-volatile values — its exact body are
// checked. Examples the server cannot answer yet are reported as pending by name on every run:
// operations that answer 501, and examples needing a condition (`given`) the harness cannot set
// up yet.
import t from 'tap';
import { listen, testApp } from './helpers/app.js';
import { loadSpec, pointerExists, withoutPointers, type SpecExample } from './helpers/spec.js';

const spec = loadSpec();

// Conditions the harness can put the server in before an example's request. Each entry prepares
// the request; an example naming a condition not listed here is pending.
const CONDITIONS: Record<string, never> = {};

interface Observed {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

async function send(base: string, example: SpecExample): Promise<Observed> {
  const url = new URL(example.path, base);
  for (const [k, v] of Object.entries(example.request.query ?? {})) url.searchParams.set(k, v);
  const headers: Record<string, string> = { ...example.request.headers };
  let body: string | undefined;
  if (example.request.rawBody !== undefined) body = example.request.rawBody;
  else if (example.request.body !== undefined) {
    body = JSON.stringify(example.request.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method: example.method, headers, body });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

// Replay every runnable example first, then declare the tests: tap ends the root test as soon as
// its queue drains, so no await may sit between test declarations.
const app = await testApp();
const base = await listen(app.server);
const runs: Array<{ example: SpecExample; pending: string | null; observed: Observed | null }> = [];
for (const example of spec.examples) {
  const missing = (example.request.given ?? []).filter((g) => !(g in CONDITIONS));
  if (missing.length > 0) {
    runs.push({ example, pending: `needs the condition ${missing.join(', ')}, which the harness cannot set up yet`, observed: null });
    continue;
  }
  const observed = await send(base, example);
  const notServed = observed.status === 501 && example.status !== 501;
  runs.push({ example, pending: notServed ? `${example.operationId} answers 501: not served by this build` : null, observed });
}
await app.close();

t.test('every operation has a success example and one example for each documented 4xx status', async (t) => {
  for (const [operationId, statuses] of spec.statuses) {
    const exampled = new Set(spec.examples.filter((e) => e.operationId === operationId).map((e) => e.status));
    t.ok([...exampled].some((s) => s >= 200 && s < 300), `${operationId} has a 2xx example`);
    for (const status of statuses.filter((s) => s >= 400 && s < 500)) {
      t.ok(exampled.has(status), `${operationId} has a ${status} example`);
    }
  }
});

for (const { example, pending, observed } of runs) {
  const name = `${example.operationId} ${example.status} ${example.name}`;
  if (pending !== null || observed === null) {
    t.test(name, { todo: pending ?? 'not run' }, () => {});
    continue;
  }
  t.test(name, async (t) => {
    t.equal(observed.status, example.status, 'status');
    t.equal(observed.headers.get('x-service-api-version'), '1', 'x-service-api-version');
    t.match(observed.headers.get('content-type') ?? '', /^application\/json/, 'content-type');
    for (const [header, { required, validate }] of Object.entries(example.headers)) {
      const value = observed.headers.get(header);
      if (value === null) {
        t.notOk(required, `required header ${header} is present`);
        continue;
      }
      t.ok(validate(value), `header ${header}: ${JSON.stringify(value)} matches the spec`, { errors: validate.errors });
    }
    const body = JSON.parse(observed.text) as unknown;
    t.ok(example.schema(body), 'body matches the response schema', { errors: example.schema.errors });
    for (const pointer of example.volatile) t.ok(pointerExists(body, pointer), `volatile ${pointer} is present`);
    t.same(withoutPointers(body, example.volatile), withoutPointers(example.value, example.volatile), 'body equals the example');
  });
}
