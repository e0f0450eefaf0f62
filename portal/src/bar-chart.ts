// A grouped bar chart as inline SVG, built with DOM calls (never markup): one group per label (a
// UTC day), one bar per series in it. It is one image to assistive technology (role="img", named
// by `label`); the figures themselves are the data table the page shows beside it. Colours come
// from the stylesheet by class: the page's CSP allows no style attribute.
import { largest, share } from './amounts.js';

const SVG = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attributes: Record<string, string | number> = {}, ...children: Array<Node | string>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

export interface Series {
  readonly name: string;
  /** The stylesheet's class that colours its bars. */
  readonly className: string;
  /** One value per group: a count or an amount, as the contract's decimal strings. */
  readonly values: readonly string[];
}

export interface BarChart {
  /** What the image shows, in a sentence: its accessible name. */
  readonly label: string;
  /** The groups' labels, in order (UTC days, YYYY-MM-DD). */
  readonly groups: readonly string[];
  readonly series: readonly Series[];
  /** Its width in the units its text is sized in: a narrower chart draws its text larger. */
  readonly width: number;
}

const HEIGHT = 180;
/** Room each side for the first and last day's labels. */
const SIDE = 18;
const TOP = 18;
const BOTTOM = 22;
const PLOT = HEIGHT - TOP - BOTTOM;
/** The room a day's label takes under the bars, so labels never overlap. */
const TICK_WIDTH = 90;

export function barChart(chart: BarChart): SVGSVGElement {
  const width = chart.width;
  const count = Math.max(1, chart.groups.length);
  const peak = largest(chart.series.flatMap((s) => s.values));
  const group = (width - 2 * SIDE) / count;
  const bar = (group * 0.8) / Math.max(1, chart.series.length);
  const baseline = TOP + PLOT;
  const bars = chart.groups.flatMap((day, g) =>
    chart.series.map((series, s) => {
      const value = series.values[g] ?? '0';
      // A value above zero always shows, however small beside the tallest.
      const height = value === '0' ? 0 : Math.max(1, share(value, peak) * PLOT);
      return svg(
        'rect',
        { class: series.className, x: (SIDE + g * group + group * 0.1 + s * bar).toFixed(2), y: (baseline - height).toFixed(2), width: bar.toFixed(2), height: height.toFixed(2) },
        svg('title', {}, `${day}: ${value} ${series.name}`),
      );
    }),
  );
  const step = Math.ceil(count / Math.floor(width / TICK_WIDTH));
  // Counted back from the last day, so the most recent is always labelled.
  const ticks = chart.groups.flatMap((day, g) =>
    (count - 1 - g) % step === 0 ? [svg('text', { class: 'tick', x: (SIDE + g * group + group / 2).toFixed(2), y: HEIGHT - 6, 'text-anchor': 'middle' }, day.slice(5))] : [],
  );
  return svg(
    'svg',
    { class: 'chart', viewBox: `0 0 ${width} ${HEIGHT}`, role: 'img', 'aria-label': chart.label, focusable: 'false' },
    svg('line', { class: 'grid', x1: 0, x2: width, y1: TOP, y2: TOP }),
    svg('text', { class: 'tick', x: SIDE, y: TOP - 5 }, peak),
    ...bars,
    svg('line', { class: 'axis', x1: 0, x2: width, y1: baseline, y2: baseline }),
    ...ticks,
  );
}
