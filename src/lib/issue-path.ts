/** A schema issue's path as the API names fields: `personalizations[0].to[1].email`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((out, key) =>
    typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`, "")
