import {
  Type,
  type Static,
  type TLiteral,
  type TObject,
  type TProperties,
  type TArray,
  type TSchema,
  type TUnsafe,
} from 'typebox';

/** One member of a union of objects told apart by their `type`: an object whose `type` is one literal. */
export type TaggedMember = TObject<TProperties & { type: TLiteral<string> }>;

/** What an open union lets through besides its known members: any object naming its type (a newer kind). */
export interface OtherMember {
  type: string;
  [field: string]: unknown;
}

const tagOf = (member: TaggedMember): string => String(member.properties.type.const);

/** JSON Schema's conditional: where a value matches `condition`, it must match `schema` too. */
export function conditional(condition: object, schema: TSchema): { if: object; then: TSchema } {
  // biome-ignore lint/suspicious/noThenProperty: `then` is the JSON Schema keyword; this object is never awaited.
  return { if: condition, then: schema };
}

/**
 * Each member as `if type is its tag, then the member's schema`: a value of a known type is checked against its
 * own member only, so a validation error names the field that is wrong (`...content.0.source.data must be
 * string`) instead of saying that no member of the union matched.
 */
function memberBranches(members: readonly TaggedMember[]): object[] {
  return members.map((member) =>
    conditional({ properties: { type: { const: tagOf(member) } }, required: ['type'] }, member),
  );
}

/**
 * A union the protocol keeps open: values of the known types must follow their member's schema; a value of
 * another type (one the protocol added later, a server tool's block) passes as any object naming its type, so
 * what a client sends is forwarded as sent. With `untagged`, an object without a `type` is that member and must
 * follow its schema (a Responses message item may leave its type out); without it, `type` is required. Narrow a
 * value to its known members with `knownMemberOf`.
 */
export function openTaggedUnion<const Members extends readonly TaggedMember[], Untagged extends TObject = never>(
  members: Members,
  { untagged, ...options }: { description?: string; untagged?: Untagged } = {},
): TUnsafe<Static<Members[number]> | Static<Untagged> | OtherMember> {
  // An object without a `type`: the `properties` entry only declares the field the `required` names.
  const missing = untagged ? [conditional({ not: { properties: { type: {} }, required: ['type'] } }, untagged)] : [];
  return Type.Unsafe<Static<Members[number]> | Static<Untagged> | OtherMember>({
    ...options,
    type: 'object',
    ...(untagged ? {} : { required: ['type'] }),
    properties: { type: { type: 'string', description: `One of: ${members.map(tagOf).join(', ')}; or another kind` } },
    allOf: [...memberBranches(members), ...missing],
  });
}

/** A union of exactly these members; a value of another type is refused, its error listing the known types. */
export function closedTaggedUnion<const Members extends readonly TaggedMember[]>(
  members: Members,
  options: { description?: string } = {},
): TUnsafe<Static<Members[number]>> {
  return Type.Unsafe<Static<Members[number]>>({
    ...options,
    type: 'object',
    required: ['type'],
    properties: { type: { enum: members.map(tagOf) } },
    allOf: memberBranches(members),
  });
}

/**
 * Whether a value of an open union (already checked against it) is one of its known members: its type names
 * one, and the union's check then held it to that member's schema.
 */
export function knownMemberOf<const Members extends readonly TaggedMember[]>(
  members: Members,
): (value: Static<Members[number]> | OtherMember) => value is Static<Members[number]> {
  const tags = new Set<unknown>(members.map(tagOf));
  return (value): value is Static<Members[number]> => tags.has(value.type);
}

/**
 * A string or a value of `schema` (an array or an object schema), as one JSON Schema `type` list rather than a
 * union: an error inside the value is then reported at its own path, where a union would only say that the
 * value is not a string.
 */
export function stringOr<Value extends TArray | TObject>(
  schema: Value,
  options: { description?: string } = {},
): TUnsafe<string | Static<Value>> {
  return Type.Unsafe<string | Static<Value>>({ ...schema, ...options, type: ['string', schema.type] });
}
