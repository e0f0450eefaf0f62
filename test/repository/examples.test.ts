// The README's examples, one per kind of wallet a partner brings, each run as the README says (a
// program of its own, from the repository, with `make run` going) to COMPLETED: a direct ledger
// connection (examples/sdk-swap.mjs), a Node backend through Canton's wallet-sdk for an internal
// and an external party (examples/wallet-sdk-swap.mjs), and a dApp page in Chromium through
// dapp-sdk's providers to a browser extension and to a remote wallet gateway (examples/dapp/).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { chromiumSkip, CHROMIUM } from '../helpers/chromium.js';
import { plainChild } from '../helpers/plain-child.js';
import { service } from '../helpers/service-process.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const UPDATE = '1220[0-9a-f]{64}';

async function example(s: { dataDir: string; address: string }, file: string, args: string[] = []): Promise<{ code: number; out: string; err: string }> {
  const child = spawn(...plainChild(process.execPath, [file, ...args]), { cwd: REPO, env: { ...process.env, DATA_DIR: s.dataDir, BESTEX_URL: s.address, CHROMIUM_PATH: CHROMIUM }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const [code] = (await once(child, 'exit')) as [number];
  return { code, out, err };
}

t.test('the examples against one make run', async (t) => {
  const s = await service(t);

  t.test('"a direct ledger connection that may act as the party": examples/sdk-swap.mjs prints each status to COMPLETED with the real update id', async (t) => {
    const { code, out, err } = await example(s, 'examples/sdk-swap.mjs');
    t.equal(code, 0, err);
    t.match(out, new RegExp(`status: SUBMITTING\\nstatus: INITIATED \\(update ${UPDATE}\\)\\nstatus: COMPLETED \\(update ${UPDATE}\\)\\n`));
    t.match(out, /the service reads completed \(same update\)/);
  });

  for (const external of [false, true]) {
    t.test(`"a Node backend or bot holding its own parties, through Canton's wallet-sdk": examples/wallet-sdk-swap.mjs${external ? ' --external' : ''} reaches COMPLETED`, async (t) => {
      const { code, out, err } = await example(s, 'examples/wallet-sdk-swap.mjs', external ? ['--external'] : []);
      t.equal(code, 0, err);
      t.match(out, external ? /\(external, signed here\)/ : /\(internal, signed by the participant\)/);
      t.match(out, new RegExp(`wallet: executed \\(update ${UPDATE}\\)`), "the wallet's own txChanged event");
      t.match(out, new RegExp(`status: INITIATED \\(update ${UPDATE}\\)\\nstatus: COMPLETED \\(update ${UPDATE}\\)\\n`));
      t.match(out, /the service reads completed \(same update\)/);
    });
  }

  const browser = chromiumSkip('the dApp examples in a browser');
  for (const wallet of ['extension', 'remote']) {
    t.test(`"${wallet === 'extension' ? 'a browser extension, through dapp-sdk' : 'a remote wallet gateway, through dapp-sdk'}": examples/dapp/run.mjs --wallet ${wallet} signs in, approves and reaches COMPLETED in Chromium`, browser, async (t) => {
      const { code, out, err } = await example(s, 'examples/dapp/run.mjs', ['--wallet', wallet]);
      t.equal(code, 0, `${out}\n${err}`);
      t.match(out, new RegExp(`connected: ${wallet}\\n`));
      if (wallet === 'remote') t.match(out, /wallet: approve the swap in your wallet\n/, "the gateway's approval page reached the page through the onApproval hook");
      t.match(out, new RegExp(`status: SUBMITTING\\n(?:.*\\n)?status: INITIATED \\(update ${UPDATE}\\)\\nstatus: COMPLETED \\(update ${UPDATE}\\)\\nresult: COMPLETED, received [0-9]+(?:\\.[0-9]{1,10})? USDCx\\n`));
    });
  }
});
