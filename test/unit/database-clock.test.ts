import { describe, expect, it } from 'vitest';
import { DatabaseClock } from '../../src/storage/database-clock.ts';

/**
 * Processes sharing a database charge spend windows by the database server's clock: a process whose own clock
 * runs apart reads the server's time once synced, measured at the middle of the round trip.
 */
describe('the database clock', () => {
  it("reads the server's time, whichever way this process's clock is off", async () => {
    const server = Date.parse('2030-01-02T00:00:00.000Z');
    for (const skewMs of [-2_500, 0, 2_500]) {
      let local = server + skewMs;
      // The round trip takes 10 ms; the server reads its clock halfway.
      const clock = new DatabaseClock(
        async () => {
          local += 5;
          const answer = new Date(server + 5);
          local += 5;
          return answer;
        },
        () => local,
      );
      expect(clock.now().getTime()).toBe(server + skewMs);
      await clock.sync();
      expect(clock.now().getTime() - 10).toBe(server);
    }
  });

  it('keeps the last offset when a sync fails', async () => {
    let fail = false;
    const clock = new DatabaseClock(
      async () => {
        if (fail) throw new Error('no database');
        return new Date(1_000_000);
      },
      () => 0,
    );
    await clock.sync();
    fail = true;
    await expect(clock.sync()).rejects.toThrow('no database');
    expect(clock.now().getTime()).toBe(1_000_000);
  });
});
