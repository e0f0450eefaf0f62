// A tap reporter: one line per test file, the full diagnostics of every failing assertion, every
// pending (todo) and skipped test by name, and a closing line "N passed, M failed, K skipped
// (Node vX.Y.Z)" that counts each file's top-level tests, and in K also every test skipped inside
// one (a test that passes with some of its own skipped has not run them). Used by `make test` as
// `tap -R ./dist/scripts/tap-summary-reporter.js`.
import { Transform, type TransformCallback } from 'node:stream';
import { Parser, type Result } from 'tap-parser';

export default class SummaryReporter extends Transform {
  private readonly parser = new Parser();
  private passed = 0;
  private failed = 0;
  private readonly pending: string[] = [];
  private readonly skipped: string[] = [];
  private readonly failures: Result[] = [];

  private readonly out = (line: string) => this.push(`${line}\n`);

  constructor() {
    super();
    this.parser.on('child', (file: Parser) => {
      file.on('assert', (test: Result) => this.countTest(test));
      file.on('child', (child: Parser) => this.collectNested(child));
    });
    this.parser.on('assert', (file: Result) => {
      this.out(`${file.ok ? 'ok    ' : 'FAILED'} ${file.name}`);
      // A file that crashed before reporting any test still fails the run.
      if (!file.ok && !file.todo && !file.skip && !this.failures.some((f) => f.fullname.startsWith(file.name))) {
        this.failed += 1;
        this.failures.push(file);
      }
    });
  }

  private countTest(test: Result): void {
    if (test.todo) this.pending.push(`${test.fullname}${typeof test.todo === 'string' ? ` (${test.todo})` : ''}`);
    else if (test.skip) this.skipped.push(test.fullname);
    else if (test.ok) this.passed += 1;
    else {
      this.failed += 1;
      if (!this.failures.some((f) => f.fullname.startsWith(test.fullname))) this.failures.push(test);
    }
  }

  private collectNested(parser: Parser): void {
    parser.on('assert', (result: Result) => {
      if (result.todo) this.pending.push(`${result.fullname}${typeof result.todo === 'string' ? ` (${result.todo})` : ''}`);
      else if (result.skip) this.skipped.push(result.fullname);
      else if (!result.ok) this.failures.push(result);
    });
    parser.on('child', (child: Parser) => this.collectNested(child));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.parser.write(chunk);
    callback();
  }

  override _flush(callback: TransformCallback): void {
    this.parser.end();
    const deepest = this.failures.filter((f) => !this.failures.some((g) => g !== f && g.fullname.startsWith(`${f.fullname} > `)));
    for (const failure of deepest) {
      this.out(`\nFAILED: ${failure.fullname}`);
      if (failure.diag) this.out(JSON.stringify(failure.diag, null, 2).split('\n').map((l) => `  ${l}`).join('\n'));
    }
    if (this.pending.length > 0) this.out(`\npending (${this.pending.length}):\n${this.pending.map((p) => `  - ${p}`).join('\n')}`);
    if (this.skipped.length > 0) this.out(`\nskipped (${this.skipped.length}):\n${this.skipped.map((p) => `  - ${p}`).join('\n')}`);
    this.out('');
    this.out(`${this.passed} passed, ${this.failed} failed, ${this.pending.length + this.skipped.length} skipped (Node ${process.version})`);
    callback();
  }
}
