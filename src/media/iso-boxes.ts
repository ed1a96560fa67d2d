/**
 * Reading ISO base media boxes (MP4, QuickTime): the boxes inside a span of the file, one after the other, and
 * the big-endian fields of one box's payload. Nothing is read past the box it belongs to; what cannot be read
 * throws `Unreadable`.
 */

/** A box: its type, and where its payload (after the size and the type) starts and ends in the file. */
export interface Box {
  type: string;
  start: number;
  end: number;
}

/** A file the gateway cannot walk: a box smaller than its header, a field past its box, a missing header. */
export class Unreadable extends Error {}

/** Ends the walk, the same way for every malformation, unless `condition` holds. */
export function check(condition: boolean): asserts condition {
  if (!condition) throw new Unreadable();
}

/** Four bytes read as Latin-1 characters: a box's type, a brand. */
function fourCc(view: DataView, at: number): string {
  return String.fromCharCode(view.getUint8(at), view.getUint8(at + 1), view.getUint8(at + 2), view.getUint8(at + 3));
}

/** Big-endian fields of one box's payload, none read past its end. */
export class Fields {
  constructor(
    private readonly view: DataView,
    private readonly box: Box,
  ) {}

  get length(): number {
    return this.box.end - this.box.start;
  }

  u32(at: number): number {
    check(at + 4 <= this.length);
    return this.view.getUint32(this.box.start + at);
  }

  fourCc(at: number): string {
    check(at + 4 <= this.length);
    return fourCc(this.view, this.box.start + at);
  }

  /** A full box's version: 0 (32-bit times) or 1 (64-bit). */
  version(): number {
    check(this.length >= 4);
    const version = this.view.getUint8(this.box.start);
    check(version <= 1);
    return version;
  }

  /** A duration of 32 or 64 bits; all bits set means unknown (a live recording), which states no length. */
  duration(at: number, wide: boolean): number {
    if (!wide) {
      const ticks = this.u32(at);
      return ticks === 0xffff_ffff ? 0 : ticks;
    }
    check(at + 8 <= this.length);
    const ticks = this.view.getBigUint64(this.box.start + at);
    return ticks === 0xffff_ffff_ffff_ffffn ? 0 : Number(ticks);
  }
}

/** The boxes directly inside [start, end), in order; one cut short by the end of the file ends there. */
export function* boxesIn(view: DataView, start: number, end: number): Generator<Box> {
  let at = start;
  while (end - at >= 8) {
    const type = fourCc(view, at + 4);
    let size = view.getUint32(at);
    let header = 8;
    if (size === 1) {
      // A 64-bit size follows the type.
      check(end - at >= 16);
      size = Number(view.getBigUint64(at + 8));
      header = 16;
    } else if (size === 0) {
      size = end - at;
    }
    check(size >= header);
    const boxEnd = Math.min(at + size, end);
    yield { type, start: at + header, end: boxEnd };
    at = boxEnd;
  }
}

export function children(view: DataView, box: Box): Generator<Box> {
  return boxesIn(view, box.start, box.end);
}

/** Where a table's entries lie in its box: from `first`, `count` entries of `size` bytes. */
export interface Table {
  first: number;
  count: number;
  size: number;
}

/** The sum of what `entry` reads at each entry of `table`, which must lie within the box. */
export function sumEntries(fields: Fields, { first, count, size }: Table, entry: (at: number) => number): number {
  check(first + count * size <= fields.length);
  let sum = 0;
  for (let index = 0; index < count; index++) sum += entry(first + index * size);
  return sum;
}
