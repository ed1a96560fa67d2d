// Preloaded (`--import`, through NODE_OPTIONS) into a gateway process a test starts to play a machine whose clock
// runs CLOCK_SKEW_MS ahead of the database server's (behind when negative): `Date` reads its own clock moved by
// that much; dates built from given parts or moments are left as they are. Plain JavaScript, as module-probe.mjs.
const skewMs = Number(process.env.CLOCK_SKEW_MS ?? 0);
const RealDate = globalThis.Date;

class SkewedDate extends RealDate {
  constructor(...parts) {
    if (parts.length === 0) super(RealDate.now() + skewMs);
    else super(...parts);
  }

  static now() {
    return RealDate.now() + skewMs;
  }
}

if (skewMs !== 0) globalThis.Date = SkewedDate;
