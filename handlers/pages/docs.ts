// The contract as served to integrators: the spec byte for byte (GET /openapi/v1.yaml), the same
// document as JSON (GET /openapi/v1.json), v2's bundled document likewise (GET /openapi/v2.yaml and
// /openapi/v2.json: one self-contained document), and a reference page rendering them (GET /docs,
// Swagger UI through @fastify/swagger-ui, well kept by the fastify team), its top bar selecting the
// swap API v1 or v2 or, when the key portal is served, the portal's API (/openapi/portal.json), under bestex's own
// title, logo and icon rather than the package's fastify ones. Every asset of the page is served
// from the package by this service: a deployment may have no internet, so the page asks no other
// origin for anything (its CSP says so to the browser too). These routes are not operations of the
// contract, as the YAML route never was: they are named in the spec's introduction.
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';

export const DOCS_PATH = '/docs';

/**
 * The page's own origin only: Swagger UI loads its scripts and styles from /docs/static, its logo
 * and icons as data: or from there, and reads the spec and sends "Try it out" requests to this
 * origin (the spec's server is relative: `/`). Scripts run from files only; styles may be inline,
 * as Swagger UI writes some at run time (a style can draw, it cannot run code or send data).
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const DOCS_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': DOCS_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const SPEC_CACHE = 'public, max-age=300';

/** The specs the top bar selects, by the name it shows; the first is the one the page opens. */
export const DOCS_SPECS = {
  v1: { url: '/openapi/v1.json', name: 'bestex swap API v1' },
  v2: { url: '/openapi/v2.json', name: 'bestex swap API v2' },
  portal: { url: '/openapi/portal.json', name: 'bestex key portal API' },
} as const;

export const DOCS_TITLE = 'bestex API reference';

/** Two opposed arrows, a swap: the tab's icon, and the top bar's mark before the name. */
const MARK = '<rect width="32" height="32" rx="7" fill="#0b57d0"/><path d="M8 12h15l-4.5-4.5M24 20H9l4.5 4.5" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/>';
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">${MARK}</svg>`;
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="148" height="40" viewBox="0 0 148 40"><g transform="translate(0 4)">${MARK}</g><text x="42" y="29" font-family="sans-serif" font-size="26" font-weight="700" fill="#fff">bestex</text></svg>`;

/** GET /openapi/<name>.yaml, the spec byte for byte, and /openapi/<name>.json, `json` (the same document). */
export function serveSpec(server: FastifyInstance, name: string, specText: Buffer, json: string): void {
  server.get(`/openapi/${name}.yaml`, async (_request, reply) => reply.type('application/yaml; charset=utf-8').header('cache-control', SPEC_CACHE).send(specText));
  server.get(`/openapi/${name}.json`, async (_request, reply) => reply.type('application/json; charset=utf-8').header('cache-control', SPEC_CACHE).send(json));
}

/**
 * A link to the key portal above the reference, where an integrator reading the Authentication
 * section looks for a key. A script file (the CSP runs no inline script) that builds the link from
 * text, as Swagger UI's own page has no place for one; the rendered spec stays the served spec.
 */
const PORTAL_LINK_JS = `(() => {
  const nav = document.createElement('nav');
  nav.className = 'portal-link';
  nav.setAttribute('aria-label', 'Partner keys');
  const link = document.createElement('a');
  link.href = '/portal';
  link.textContent = 'Get a free partner key, see its usage, rotate it: the key portal';
  nav.append(link);
  document.body.prepend(nav);
})();
`;
const PORTAL_LINK_CSS = '.portal-link { font: 600 16px/1.5 sans-serif; padding: 10px 20px; background: #e6f0ff; border-bottom: 1px solid #c9d0da; } .portal-link a { color: #0b57d0; }';

/** A served spec: its text, served as it is, and the document parsed from it, before anything (openapi-backend) changes it. */
export interface ServedSpec {
  readonly text: Buffer;
  readonly definition: object;
}

/** `portal`: the key portal is served, so the page links to it. */
export async function registerDocs(server: FastifyInstance, specs: { readonly v1: ServedSpec; readonly v2: ServedSpec }, options: { portal: boolean }): Promise<void> {
  const json = JSON.stringify(specs.v1.definition);
  // The page's own copy: parsing the JSON costs a fraction of parsing the YAML again.
  const document = JSON.parse(json) as Record<string, unknown>;

  serveSpec(server, 'v1', specs.v1.text, json);
  serveSpec(server, 'v2', specs.v2.text, JSON.stringify(specs.v2.definition));

  // In a context of its own: the swagger decorator and the page's headers stay with the page.
  await server.register(async (docs) => {
    await docs.register(fastifySwagger, { mode: 'static', specification: { document: document as never } });
    await docs.register(fastifySwaggerUi, {
      routePrefix: DOCS_PATH,
      // `urls` puts the selector in the top bar, in place of a box that loads any URL; given
      // `urls`, Swagger UI reads the selected one, not the ./json the package's initializer names.
      uiConfig: { deepLinking: true, validatorUrl: null, urls: options.portal ? [DOCS_SPECS.v1, DOCS_SPECS.v2, DOCS_SPECS.portal] : [DOCS_SPECS.v1, DOCS_SPECS.v2] },
      uiHooks: {
        onRequest: (_request, reply: FastifyReply, done) => {
          reply.headers(DOCS_HEADERS);
          done();
        },
      },
      logo: { type: 'image/svg+xml', content: LOGO_SVG },
      theme: {
        title: DOCS_TITLE,
        favicon: [{ filename: 'bestex.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: FAVICON_SVG }],
        ...(options.portal ? { js: [{ filename: 'portal-link.js', content: PORTAL_LINK_JS }], css: [{ filename: 'portal-link.css', content: PORTAL_LINK_CSS }] } : {}),
      },
    });
    // @fastify/static's files (/docs/static/*) do not run the UI's hooks.
    docs.addHook('onSend', async (request, reply) => {
      if (request.url.startsWith(`${DOCS_PATH}/`) || request.url === DOCS_PATH) reply.headers(DOCS_HEADERS);
    });
  });
}
