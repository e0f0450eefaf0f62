// A dApp page that swaps through bestex with the user's own wallet, reached through Canton's dApp
// providers (dapp-sdk's): a browser extension, or a remote wallet gateway. Run it from the
// repository, with `make run` going:
//
//   node examples/dapp/run.mjs --wallet extension   # the sandbox's wallet extension, loaded into Chromium
//   node examples/dapp/run.mjs --wallet remote      # the sandbox's wallet gateway, through its login and approval pages
//
// It serves the page (index.html and dapp.js, bundled) on a loopback port and drives Debian's
// Chromium (CHROMIUM_PATH, /usr/bin/chromium by default) through it as a user would: connect, sign
// in to the wallet, swap, approve. Each line the page writes is printed here, down to
// `result: COMPLETED`. With --open, Chromium opens in a window and you click through it yourself
// (it needs a display); the run ends when you close the browser.
//
// BESTEX_URL (default http://127.0.0.1:8080) is the service; the sandbox's registries and wallet
// gateway come from DATA_DIR/sandbox.json (DATA_DIR as the service reads it, ./data by default).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';

const { values: args } = parseArgs({ options: { wallet: { type: 'string', default: 'extension' }, open: { type: 'boolean', default: false } } });
if (!['extension', 'remote'].includes(args.wallet)) {
  console.error('usage: node examples/dapp/run.mjs [--wallet extension|remote] [--open]');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const sandbox = JSON.parse(readFileSync(path.join(process.env.DATA_DIR || './data', 'sandbox.json'), 'utf8'));
const config = { bestex: process.env.BESTEX_URL || 'http://127.0.0.1:8080', registries: sandbox.registries, walletGateway: sandbox.walletGateway };

// The page's script with its packages, as a dApp's bundler would make it.
const bundle = await build({ entryPoints: [path.join(here, 'dapp.js')], bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'warning' });
const files = {
  '/': ['text/html; charset=utf-8', readFileSync(path.join(here, 'index.html'))],
  '/dapp.js': ['text/javascript; charset=utf-8', bundle.outputFiles[0].contents],
  '/config.json': ['application/json', JSON.stringify(config)],
};
const server = createServer((request, response) => {
  const file = files[new URL(request.url, 'http://page').pathname];
  if (!file) return response.writeHead(404).end();
  response.writeHead(200, { 'content-type': file[0] }).end(file[1]);
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const page = `http://127.0.0.1:${server.address().port}/`;

// The extension, told where the sandbox's gateway is, and a browser profile of its own.
const work = mkdtempSync(path.join(tmpdir(), 'bestex-dapp-'));
const extension = path.join(work, 'extension');
cpSync(path.join(here, 'extension'), extension, { recursive: true });
writeFileSync(path.join(extension, 'config.js'), `globalThis.BESTEX_SANDBOX_GATEWAY = ${JSON.stringify(sandbox.walletGateway)};\n`);

const browser = await chromium.launchPersistentContext(path.join(work, 'profile'), {
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  headless: !args.open,
  args: [
    '--no-sandbox',
    '--no-first-run',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    ...(args.wallet === 'extension' ? [`--disable-extensions-except=${extension}`, `--load-extension=${extension}`] : []),
  ],
});
const tab = browser.pages()[0] ?? (await browser.newPage());
let ended = null;
const result = new Promise((resolve) => (ended = resolve));
// The page's own lines; the browser's (such as the 404 a gateway answers for a method it lacks) to stderr.
tab.on('console', (message) => {
  const line = message.text();
  if (message.type() !== 'log') return console.error(`browser: ${line}`);
  console.log(line);
  if (line.startsWith('result: ') || line.startsWith('could not connect: ')) ended(line);
});

async function signIn() {
  const login = await browser.waitForEvent('page');
  await login.getByRole('button', { name: 'Sign in' }).click();
}

async function approve() {
  if (args.wallet === 'extension') {
    await tab.getByRole('dialog', { name: 'bestex sandbox wallet' }).getByRole('button', { name: 'Approve' }).click({ timeout: 60_000 });
    return;
  }
  const link = tab.getByRole('link', { name: 'open it' });
  await link.waitFor({ state: 'visible', timeout: 60_000 });
  const [approval] = await Promise.all([browser.waitForEvent('page'), link.click()]);
  await approval.getByRole('button', { name: 'Approve' }).click();
}

let outcome;
try {
  await tab.goto(page);
  if (args.open) {
    console.log(`the dApp is at ${page}: choose "${args.wallet === 'remote' ? 'A remote wallet gateway' : 'A browser extension'}", connect, swap, approve; close the browser to end`);
    await new Promise((resolve) => browser.on('close', resolve));
  } else {
    await tab.getByRole('radio', { name: args.wallet === 'remote' ? 'A remote wallet gateway' : 'A browser extension' }).check();
    await Promise.all([signIn(), tab.getByRole('button', { name: 'Connect' }).click()]);
    await tab.getByRole('button', { name: 'Swap' }).click({ timeout: 30_000 });
    await Promise.race([approve(), result]);
    outcome = await result;
  }
} finally {
  await browser.close().catch(() => undefined);
  server.close();
  rmSync(work, { recursive: true, force: true });
}
process.exitCode = args.open || outcome?.startsWith('result: COMPLETED') ? 0 : 1;
