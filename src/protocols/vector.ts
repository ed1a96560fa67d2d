import { Type } from 'typebox';

/** An embedding as the protocols send it: floats (JSON numbers are finite), and an empty one is no embedding. */
export const Vector = Type.Array(Type.Number(), { minItems: 1 });
