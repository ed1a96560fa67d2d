/**
 * Counters and histograms for the request path, exported in Prometheus text format. prom-client's own metrics
 * check and hash the whole label set on every `inc` and `observe` (and their children do too); here a label set
 * is resolved once into a cell that the caller keeps or finds again by its values, so a figure costs an
 * addition. They print alongside the registry's metrics (process figures, scrape-time gauges), in the same format.
 */

/** One label set's running total. */
export class CounterCell {
  value = 0;

  /** A counter only goes up: a negative or NaN step is ignored rather than spoiling the total for the process's life. */
  inc(by = 1): void {
    if (!(by >= 0)) return;
    this.value += by;
  }
}

/** One label set's observations: the count of each bucket (not cumulative), their sum and their count. */
export class HistogramCell {
  readonly buckets: number[];
  sum = 0;
  count = 0;

  constructor(
    /** Upper bounds, ascending; the last bucket is +Inf's. */
    readonly bounds: readonly number[],
  ) {
    this.buckets = new Array<number>(bounds.length + 1).fill(0);
  }

  /** NaN is ignored: it falls in no bucket and would turn the sum into NaN for good. */
  observe(value: number): void {
    if (Number.isNaN(value)) return;
    let index = 0;
    while (index < this.bounds.length && value > this.bounds[index]!) index += 1;
    this.buckets[index] = this.buckets[index]! + 1;
    this.sum += value;
    this.count += 1;
  }
}

type LabelValues<L extends string> = Readonly<Record<L, string>>;

/** Label values, one level of maps per label name, down to the label set's entry. */
type LabelTree<Entry> = Map<string, LabelTree<Entry> | Entry>;

abstract class Family<L extends string, Cell> {
  /**
   * Found by walking one map per label, keyed by the caller's own strings (the catalog's model ids, literals),
   * whose hashes V8 keeps: a key joined from the values would be a new string to build and hash on every figure.
   */
  private readonly tree: LabelTree<{ labels: LabelValues<L>; cell: Cell }> = new Map();
  /** Every label set's entry, in the order first seen, for the exposition. */
  private readonly entries: Array<{ labels: LabelValues<L>; cell: Cell }> = [];

  readonly name: string;
  private readonly help: string;
  private readonly labelNames: readonly [L, ...L[]];

  constructor(
    description: FamilyDescription<L>,
    private readonly type: 'counter' | 'histogram',
  ) {
    this.name = description.name;
    this.help = description.help;
    this.labelNames = description.labelNames;
  }

  /** The cell of a label set, made on first use. Label sets must stay few (route templates, models, providers). */
  cell(labels: LabelValues<L>): Cell {
    const names = this.labelNames;
    let level = this.tree;
    for (let index = 0; index < names.length - 1; index += 1) {
      const value = labels[names[index]!];
      let next = level.get(value) as LabelTree<{ labels: LabelValues<L>; cell: Cell }> | undefined;
      if (!next) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const last = labels[names[names.length - 1]!];
    let entry = level.get(last) as { labels: LabelValues<L>; cell: Cell } | undefined;
    if (!entry) {
      const copy = {} as Record<L, string>;
      for (const name of names) copy[name] = labels[name];
      entry = { labels: copy, cell: this.emptyCell() };
      level.set(last, entry);
      this.entries.push(entry);
    }
    return entry.cell;
  }

  /** HELP and TYPE, then a line per sample; HELP and TYPE alone while nothing was recorded. */
  text(): string {
    const lines = [
      `# HELP ${this.name} ${this.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}`,
      `# TYPE ${this.name} ${this.type}`,
    ];
    for (const { labels, cell } of this.entries)
      this.samples(
        lines,
        this.labelNames.map((name) => `${name}="${escapeLabel(labels[name])}"`),
        cell,
      );
    return lines.join('\n');
  }

  protected abstract emptyCell(): Cell;
  protected abstract samples(lines: string[], labels: string[], cell: Cell): void;
}

/** A metric family's name, its help text and its label names (which every cell gives a value for). */
export interface FamilyDescription<L extends string> {
  name: string;
  help: string;
  labelNames: readonly [L, ...L[]];
}

export class CounterFamily<L extends string> extends Family<L, CounterCell> {
  constructor(description: FamilyDescription<L>) {
    super(description, 'counter');
  }

  protected emptyCell(): CounterCell {
    return new CounterCell();
  }

  protected samples(lines: string[], labels: string[], cell: CounterCell): void {
    lines.push(`${this.name}${braced(labels)} ${sampleValue(cell.value)}`);
  }
}

export class HistogramFamily<L extends string> extends Family<L, HistogramCell> {
  private readonly bounds: readonly number[];

  /** `bounds`: upper bounds, ascending; +Inf is added. */
  constructor(description: FamilyDescription<L> & { bounds: readonly number[] }) {
    super(description, 'histogram');
    this.bounds = description.bounds;
  }

  protected emptyCell(): HistogramCell {
    return new HistogramCell(this.bounds);
  }

  protected samples(lines: string[], labels: string[], cell: HistogramCell): void {
    let cumulative = 0;
    this.bounds.forEach((bound, index) => {
      cumulative += cell.buckets[index]!;
      lines.push(`${this.name}_bucket${braced([...labels, `le="${bound}"`])} ${cumulative}`);
    });
    lines.push(`${this.name}_bucket${braced([...labels, 'le="+Inf"'])} ${cell.count}`);
    lines.push(`${this.name}_sum${braced(labels)} ${sampleValue(cell.sum)}`);
    lines.push(`${this.name}_count${braced(labels)} ${cell.count}`);
  }
}

/** A value as the text format spells it: JavaScript prints `Infinity`, which fails the whole scrape. */
function sampleValue(value: number): string {
  if (Number.isFinite(value)) return String(value);
  return Number.isNaN(value) ? 'NaN' : value > 0 ? '+Inf' : '-Inf';
}

const braced = (labels: string[]) => (labels.length > 0 ? `{${labels.join(',')}}` : '');

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}
