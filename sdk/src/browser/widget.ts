// The script the service serves at GET /sdk/widget.js: <bestex-swap> defined on load, for a host
// that embeds it with one tag (<script type="module" src=".../sdk/widget.js">).
import { defineBestexSwap } from '../widget.js';

defineBestexSwap();

export { BestexSwapElement, defineBestexSwap } from '../widget.js';
