import Type, { type Static, type TSchema } from 'typebox';
import { storedCheck, type StoredCheck } from '../domain/stored-check.ts';

/**
 * The rows of raw SQL, checked against the shape the caller reads them as: pg answers whatever the statement
 * selects (`bigint` and `numeric` as text, `int4` as a number, booleans, json as parsed; `timestamptz` as text
 * through drizzle, a Date through the pool), and a statement or a function changed under the code would
 * otherwise flow on as values of the wrong type.
 */

/** What a statement's rows must be; `name` names the statement when a row is not. */
export interface RowShape<Row> {
  readonly name: string;
  readonly row: StoredCheck<Row>;
}

/** A named prepared statement (each connection parses and plans it once) and the shape of its rows. */
export interface PreparedStatement<Row> extends RowShape<Row> {
  readonly text: string;
}

/** Compiles the check once: call at module level, one shape per statement. */
export function rowShape<S extends TSchema>(name: string, schema: S): RowShape<Static<S>> {
  return { name, row: storedCheck(schema) };
}

export function preparedStatement<S extends TSchema>(statement: {
  name: string;
  text: string;
  row: S;
}): PreparedStatement<Static<S>> {
  return { name: statement.name, text: statement.text, row: storedCheck(statement.row) };
}

/**
 * A row of a statement that does not have the shape its reader expects. It names the statement, the row's
 * index and the column and what it should have been, never a value: rows hold tenants' data.
 */
export class StorageRowError extends Error {
  override readonly name = 'StorageRowError';

  constructor(
    readonly statement: string,
    problem: string,
  ) {
    super(`storage statement ${statement} answered a row of an unexpected shape: ${problem}`);
  }
}

/** The rows, typed once every one is checked; throws StorageRowError at the first that does not match. */
export function checkedRows<Row>(rows: unknown[], shape: RowShape<Row>): Row[] {
  if (rows.every(shape.row.check)) return rows;
  const index = rows.findIndex((row) => !shape.row.check(row));
  throw new StorageRowError(shape.name, `row ${index}: ${shape.row.problem(rows[index])}`);
}

/** An integer as pg answers a `bigint` or an integral `numeric` (sums, `count(*)`): text that BigInt reads. */
export const integerText = Type.String({ pattern: '^-?[0-9]+$' });

/**
 * A `timestamptz` read through drizzle (`queryRows`): its text, as drizzle turns pg's parsing of dates off for
 * the columns it maps itself; the reader makes it a Date.
 */
export const timestampText = Type.Refine(
  Type.String(),
  (text) => !Number.isNaN(Date.parse(text)),
  () => 'must be a timestamp',
);
