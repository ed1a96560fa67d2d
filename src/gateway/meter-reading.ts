/**
 * The one way a meter is read: its reading, or, for a copy it cannot read (an answer that broke it), the
 * reading of a failure that delivered nothing.
 */
export function meterReading<R>(meter: { reading(): R }, unreadable: () => R): R {
  try {
    return meter.reading();
  } catch {
    return unreadable();
  }
}
