// Compiles named JSON Schemas (which may $ref the spec's component schemas) into one ESM module
// of ajv standalone validators.
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import standaloneCode from 'ajv/dist/standalone/index.js';

export const COMPONENTS_ID = 'components';

// The spec says '#/components/schemas/X'; inside ajv the components live in a schema of their own.
export function rehome<T>(schema: T): T {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${COMPONENTS_ID}#/$defs/`)) as T;
}

export function compileValidators(
  components: Record<string, unknown>,
  schemas: Record<string, Record<string, unknown>>,
  options: { coerceTypes: boolean },
): string {
  const ajv = new Ajv2020.default({
    allErrors: false,
    // verbose: errors carry their schema, whose description phrases the error message.
    verbose: true,
    coerceTypes: options.coerceTypes,
    strict: true,
    code: { source: true, esm: true, lines: true },
  });
  addFormats.default(ajv, ['date-time', 'int32']);
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: rehome(components) });
  const exportsMap: Record<string, string> = {};
  for (const [name, schema] of Object.entries(schemas)) {
    ajv.addSchema(rehome(schema), name);
    exportsMap[name] = name;
  }
  return toEsm(standaloneCode.default(ajv, exportsMap));
}

// ajv's ESM output still calls require() for its runtime helpers and formats: turn each into an
// import so the module loads under "type": "module".
function toEsm(code: string): string {
  const modules = new Map<string, string>();
  const body = code.replace(/require\("([^"]+)"\)/g, (_m, mod: string) => {
    if (!modules.has(mod)) modules.set(mod, `__import${modules.size}`);
    return modules.get(mod)!;
  });
  const imports = [...modules].map(([mod, alias]) => `import ${alias} from ${JSON.stringify(`${mod}.js`)};`).join('\n');
  return `// @ts-nocheck\n${imports}\n${body.replace(/^"use strict";/, '')}\n`;
}
