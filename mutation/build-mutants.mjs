// The sandbox's build command (see stryker.config.mjs): the sandbox holds a copy of the project's
// dist/, which `make build` has just compiled, and only the files Stryker mutated differ from their
// sources there; so only those are compiled again, each on its own with the project's compiler
// options, into the sandbox's dist/ (an SDK file into sdk/dist/). A whole `tsc -p .` would cost a
// minute for the same output.
import { readFileSync, writeFileSync } from 'node:fs';
import ts from 'typescript';

const { config, error } = ts.readConfigFile('tsconfig.json', ts.sys.readFile);
if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
const { options } = ts.parseJsonConfigFileContent(config, ts.sys, '.');
// One file alone cannot see package.json's "type": "module", which makes NodeNext emit ES modules.
const compilerOptions = { ...options, module: ts.ModuleKind.ES2022, moduleResolution: ts.ModuleResolutionKind.Bundler, sourceMap: false, inlineSourceMap: false, declaration: false };

// The SDK is its own package, compiled from sdk/src/ into sdk/dist/ (its tests load it from there).
const SDK_SOURCES = 'sdk/src/';

for (const file of process.argv.slice(2)) {
  const { outputText, diagnostics } = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions, fileName: file, reportDiagnostics: true });
  if (diagnostics?.length) throw new Error(`${file}: ${ts.flattenDiagnosticMessageText(diagnostics[0].messageText, '\n')}`);
  const compiled = file.replace(/\.ts$/, '.js');
  writeFileSync(compiled.startsWith(SDK_SOURCES) ? `sdk/dist/${compiled.slice(SDK_SOURCES.length)}` : `dist/${compiled}`, outputText);
}
