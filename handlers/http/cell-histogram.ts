// A Prometheus histogram for the hot path: each label combination gets a cell once, and an
// observation is a bucket search and three additions on it. prom-client's own labelled child
// validates its labels and builds their hash string on every observation: ~0.6 µs a request on
// this VM, where a cached quote costs the server ~41 µs. The registry formats it like any of its
// metrics, reading it through name, help, type, aggregator and get().
import type { Histogram, Registry } from 'prom-client';

/** One label combination's observations: a count per bucket (not cumulative), their sum and count. */
export class HistogramCell {
  private readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const { bounds } = this;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    // Above the last bound: counted in +Inf only, which is the count.
    if (i < bounds.length) this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }

  /** The cumulative count at each bound, as the exposition format gives `le` buckets. */
  cumulative(): number[] {
    let total = 0;
    return Array.from(this.counts, (n) => (total += n));
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

interface Sample {
  readonly value: number;
  readonly labels: Readonly<Record<string, string | number>>;
  readonly metricName: string;
}

export class CellHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly cells: Array<{ readonly labels: Readonly<Record<L, string>>; readonly cell: HistogramCell }> = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as unknown as Histogram<L>);
  }

  /** A new cell for these labels: the caller keeps it, one per label combination. */
  cell(labels: Readonly<Record<L, string>>): HistogramCell {
    const cell = new HistogramCell(this.buckets);
    this.cells.push({ labels, cell });
    return cell;
  }

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const { labels, cell } of this.cells) {
      const cumulative = cell.cumulative();
      this.buckets.forEach((le, i) => values.push({ value: cumulative[i]!, labels: { ...labels, le }, metricName: `${this.name}_bucket` }));
      values.push({ value: cell.count, labels: { ...labels, le: '+Inf' }, metricName: `${this.name}_bucket` });
      values.push({ value: cell.sum, labels, metricName: `${this.name}_sum` });
      values.push({ value: cell.count, labels, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const { cell } of this.cells) cell.reset();
  }
}
