// Self-tests of the official-OpenAPI helper: the pinned documents load, concrete paths find their
// templates, and answers are judged by the documented schemas, so that a later conformance test
// failing points at the sandbox rather than at the helper.
import t from 'tap';
import {
  documentedOperations,
  loadOfficialOpenApi,
  validateAnswer,
  type OpenApiDocument,
} from '../helpers/official-openapi.js';

const ledger = loadOfficialOpenApi('ledger');
const transfer = loadOfficialOpenApi('transfer-instruction');

const cantonError = {
  code: 'USER_NOT_FOUND',
  cause: 'getting user failed for unknown user "alice"',
  correlationId: 'c0ffee',
  context: { participant: 'participant1', user_id: 'alice' },
  resources: [['USER_ID', 'alice']],
  errorCategory: 11,
  grpcCodeValue: 5,
};

const disclosed = {
  templateId: '#splice-amulet:Splice.AmuletRules:AmuletRules',
  contractId: '00abc',
  createdEventBlob: 'CgMyLjES',
  synchronizerId: 'global-domain::1220aa',
};

t.test('the pinned documents are the expected versions', async (t) => {
  t.equal(ledger.openapi, '3.0.3');
  t.match(ledger.info.version, /^3\.4\./);
  t.equal(transfer.info.version, '1.1.0');
  t.equal(loadOfficialOpenApi('allocation').info.version, '1.1.0');
  t.equal(loadOfficialOpenApi('allocation-instruction').info.version, '1.0.0');
  t.equal(loadOfficialOpenApi('token-metadata').info.version, '1.0.0');
});

t.test('documentedOperations lists method and template pairs', async (t) => {
  const ops = documentedOperations(ledger);
  t.ok(ops.some((o) => o.method === 'GET' && o.path === '/v2/state/ledger-end'));
  t.ok(ops.some((o) => o.method === 'DELETE' && o.path === '/v2/users/{user-id}'));
  t.same(documentedOperations(transfer), [
    { method: 'POST', path: '/registry/transfer-instruction/v1/transfer-factory' },
    { method: 'POST', path: '/registry/transfer-instruction/v1/{transferInstructionId}/choice-contexts/accept' },
    { method: 'POST', path: '/registry/transfer-instruction/v1/{transferInstructionId}/choice-contexts/reject' },
    { method: 'POST', path: '/registry/transfer-instruction/v1/{transferInstructionId}/choice-contexts/withdraw' },
  ]);
});

t.test('GetLedgerEndResponse', async (t) => {
  const answer = { method: 'GET', path: '/v2/state/ledger-end', status: 200 };
  t.same(validateAnswer(ledger, { ...answer, body: { offset: 5 } }), { ok: true, errors: '' });
  const bad = validateAnswer(ledger, { ...answer, body: { offset: 'x' } });
  t.equal(bad.ok, false);
  t.match(bad.errors, /body\/offset must be integer/);
  t.equal(validateAnswer(ledger, { ...answer, body: { offset: 2.5 } }).ok, false, 'int64 is an integer');
});

t.test('what is not documented throws', async (t) => {
  t.throws(() => validateAnswer(ledger, { method: 'GET', path: '/v2/state/ledger-begin', status: 200, body: {} }), { message: /no such path/ });
  t.throws(() => validateAnswer(ledger, { method: 'PUT', path: '/v2/state/ledger-end', status: 200, body: {} }), { message: /documents no PUT/ });
  t.throws(
    () => validateAnswer(transfer, { method: 'POST', path: '/registry/transfer-instruction/v1/transfer-factory', status: 500, body: { error: 'x' } }),
    { message: /status 500 is not documented/ },
    'the registry documents no default response',
  );
  t.throws(
    () => validateAnswer(ledger, { method: 'GET', path: '/v2/state/ledger-end', status: 200, body: '5', contentType: 'text/html' }),
    { message: /text\/html is not documented/ },
  );
});

t.test('JsCantonError through the default response of a templated path', async (t) => {
  const answer = { method: 'GET', path: '/v2/users/alice%40example', status: 404 };
  t.same(validateAnswer(ledger, { ...answer, body: cantonError }), { ok: true, errors: '' });
  const { code: _code, ...withoutCode } = cantonError;
  const bad = validateAnswer(ledger, { ...answer, body: { ...withoutCode, resources: [['USER_ID']] } });
  t.equal(bad.ok, false);
  t.match(bad.errors, /GET \/v2\/users\/\{user-id\} default application\/json:/);
  t.match(bad.errors, /must have required property 'code'/);
  t.match(bad.errors, /body\/resources\/0 must NOT have fewer than 2 items/);
});

t.test('a literal template wins over a parameter', async (t) => {
  const answer = { method: 'GET', path: '/v2/parties/participant-id', status: 200 };
  t.ok(validateAnswer(ledger, { ...answer, body: { participantId: 'participant1::1220aa' } }).ok);
  t.notOk(validateAnswer(ledger, { ...answer, body: { partyDetails: [] } }).ok, 'judged as GetParticipantIdResponse');
});

t.test('text/plain 400 answers of the ledger', async (t) => {
  const answer = { method: 'GET', path: '/v2/state/ledger-end?x=1', status: 400, contentType: 'text/plain; charset=utf-8' };
  t.ok(validateAnswer(ledger, { ...answer, body: 'Invalid value for: headers' }).ok);
  t.notOk(validateAnswer(ledger, { ...answer, body: { error: 'x' } }).ok);
});

t.test('registry transfer-factory answer (TransferFactoryWithChoiceContext)', async (t) => {
  const answer = { method: 'POST', path: '/registry/transfer-instruction/v1/transfer-factory', status: 200 };
  const factory = {
    factoryId: '00factory',
    transferKind: 'direct',
    choiceContext: { choiceContextData: { values: {} }, disclosedContracts: [disclosed] },
  };
  t.same(validateAnswer(transfer, { ...answer, body: factory }), { ok: true, errors: '' });

  const wrongKind = validateAnswer(transfer, { ...answer, body: { ...factory, transferKind: 'teleport' } });
  t.equal(wrongKind.ok, false);
  t.match(wrongKind.errors, /body\/transferKind must be equal to one of the allowed values \("self", "direct", "offer"\)/);

  const { synchronizerId: _s, ...undisclosable } = disclosed;
  const missing = validateAnswer(transfer, {
    ...answer,
    body: { factoryId: '00factory', transferKind: 'offer', choiceContext: { choiceContextData: {}, disclosedContracts: [undisclosable] } },
  });
  t.equal(missing.ok, false);
  t.match(missing.errors, /body\/choiceContext\/disclosedContracts\/0 must have required property 'synchronizerId'/);

  t.ok(validateAnswer(transfer, { ...answer, status: 404, body: { error: 'no such instrument' } }).ok, 'via components/responses');
  t.notOk(validateAnswer(transfer, { ...answer, status: 400, body: { message: 'bad' } }).ok);
});

t.test('registry choice contexts and metadata', async (t) => {
  const accept = { method: 'POST', path: '/registry/transfer-instruction/v1/00abc/choice-contexts/accept', status: 200 };
  t.ok(validateAnswer(transfer, { ...accept, body: { choiceContextData: {}, disclosedContracts: [] } }).ok);
  t.notOk(validateAnswer(transfer, { ...accept, body: { choiceContextData: {} } }).ok);

  const metadata = loadOfficialOpenApi('token-metadata');
  const instrument = { id: 'Amulet', name: 'Amulet', symbol: 'AMT', decimals: 10, supportedApis: { 'splice-api-token-metadata-v1': 1 } };
  const get = { method: 'GET', path: '/registry/metadata/v1/instruments/Amulet', status: 200 };
  t.ok(validateAnswer(metadata, { ...get, body: instrument }).ok);
  t.notOk(validateAnswer(metadata, { ...get, body: { ...instrument, decimals: 300 } }).ok, 'int8');
  t.notOk(validateAnswer(metadata, { ...get, body: { ...instrument, totalSupplyAsOf: 'yesterday' } }).ok, 'date-time');
});

t.test('OpenAPI 3.0 nullable is honoured', async (t) => {
  const doc: OpenApiDocument = {
    openapi: '3.0.3',
    info: { title: 'nullable probe', version: '0' },
    paths: {
      '/thing': {
        get: {
          responses: {
            '200': {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
            },
            '204': { description: 'no body' },
          },
        },
      },
    },
    components: { schemas: { Thing: { type: 'object', properties: { note: { type: 'string', nullable: true } } } } },
  };
  const answer = { method: 'GET', path: '/thing', status: 200 };
  t.ok(validateAnswer(doc, { ...answer, body: { note: null } }).ok);
  t.ok(validateAnswer(doc, { ...answer, body: { note: 'n' } }).ok);
  t.notOk(validateAnswer(doc, { ...answer, body: { note: 1 } }).ok);
  t.ok(validateAnswer(doc, { ...answer, status: 204, body: undefined }).ok);
  t.notOk(validateAnswer(doc, { ...answer, status: 204, body: { note: null } }).ok);
});
