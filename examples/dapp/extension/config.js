// Where the sandbox wallet gateway's dApp API is. run.mjs writes this file into the copy of the
// extension it loads, from the running sandbox's manifest (its `walletGateway`); to load the
// extension by hand, put your sandbox's `walletGateway` from DATA_DIR/sandbox.json here.
globalThis.BESTEX_SANDBOX_GATEWAY = 'http://127.0.0.1:0/api/v0/dapp';
