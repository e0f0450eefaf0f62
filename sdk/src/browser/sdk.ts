// The script the service serves at GET /sdk/sdk.js: the SDK and its sandbox wallet as one module,
// for a page without a bundler (the demo's host script imports it).
export * from '../index.js';
export { sandboxProvider } from '../sandbox.js';
