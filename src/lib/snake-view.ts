// Records as the API answers with them: the store's camelCase fields under snake_case names.

/** `userId` as `user_id`. */
type Snake<Name extends string> = Name extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${Snake<Tail>}`
  : Name;

/** A record's `Field`s under their snake_case names, with their values. */
export type SnakeView<Row, Field extends keyof Row & string> = { [Name in Field as Snake<Name>]: Row[Name] };

/**
 * The view of a record made of these fields, in this order, each under its snake_case name (`createdAt` as
 * `created_at`), its value as the record has it. The names are worked out once, not per record.
 */
export function snakeView<const Field extends string>(fields: readonly Field[]) {
  const names = fields.map((field) => [field, field.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`)] as const);
  return <Row extends { [Name in Field]: unknown }>(record: Row): SnakeView<Row, Field> => {
    const view: { [name: string]: unknown } = {};
    for (const [field, name] of names) view[name] = record[field];
    return view as SnakeView<Row, Field>;
  };
}
