import type { TokenLogprob } from '../../src/domain/chat.ts';

/**
 * The log probability a fake gives the word it sends at `place`, with `top` alternatives as the real APIs list
 * them: the chosen token first, then less likely ones. Each fake writes it in its protocol's shape.
 */
export function fakeTokenLogprob(piece: string, { place, top }: { place: number; top: number }): TokenLogprob {
  const logprob = -((place % 7) + 1) / 16;
  return {
    token: piece,
    logprob,
    top: Array.from({ length: top }, (_, rank) =>
      rank === 0 ? { token: piece, logprob } : { token: `${piece.trim()}~${rank}`, logprob: logprob - rank },
    ),
  };
}
