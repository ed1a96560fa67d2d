import { Type, type Static, type TObject, type TUnsafe } from 'typebox';

/** A kind the protocol has (or a compatible server adds) beyond those the gateway names: forwarded as given. */
export type OtherKind = { type: string } & Readonly<Record<string, unknown>>;

/** JSON Schema's `if`/`then`: `schema` applies to a value that `condition` matches. */
function when(condition: object, schema: TObject): object {
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's keyword, in a schema no code awaits
  return { if: condition, then: schema };
}

/**
 * Objects told apart by their `type`, as the protocol's content parts, tools and formats are: each kind named
 * here is checked by its own schema (a check that fails names the field that broke it, as `if`/`then` reports
 * the `then` schema's errors, where a union would report every branch), and a kind not named passes, since the
 * protocol is open to kinds it adds and a relayed request keeps them. With `untagged`, an object without a
 * `type` is that kind (a Responses message item may leave its type out).
 */
export function openTaggedUnion<Kinds extends Readonly<Record<string, TObject>>, Untagged extends TObject = never>(
  kinds: Kinds,
  { description, untagged }: { description: string; untagged?: Untagged },
): TUnsafe<Static<Kinds[keyof Kinds]> | Static<Untagged> | OtherKind> {
  const tagged = Object.entries(kinds).map(([tag, schema]) =>
    when({ properties: { type: { const: tag } }, required: ['type'] }, schema),
  );
  // An object without a `type`: the `properties` entry only declares the field the `required` names.
  const missing = untagged ? [when({ not: { properties: { type: {} }, required: ['type'] } }, untagged)] : [];
  return Type.Unsafe<Static<Kinds[keyof Kinds]> | Static<Untagged> | OtherKind>({
    type: 'object',
    properties: { type: { type: 'string', description: `One of: ${Object.keys(kinds).join(', ')}; or another kind` } },
    ...(untagged ? {} : { required: ['type'] }),
    allOf: [...tagged, ...missing],
    description,
  });
}
