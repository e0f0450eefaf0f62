// Bundles a spec that borrows components from another spec file (openapi/v2.yaml takes the shapes
// v1 did not change from openapi/v1.yaml, as `./v1.yaml#/components/schemas/Pair`) into one
// self-contained document: each borrowed component is copied under its own name into the
// document's components, with whatever it refers to in turn, and every reference made local. A
// borrowed component whose name the document already uses for a different definition is refused,
// never renamed or guessed at: the bundle means exactly what the two files say. Pure: it is
// handed the parsed documents.

type Json = Record<string, unknown>;

/** `main` with every reference into one of `others` (by the file name it is referred to as) made local. */
export function bundleSpec(main: Json, others: Readonly<Record<string, Json>>): Json {
  const bundled = structuredClone(main);
  const components = ((bundled.components ??= {}) as Record<string, Record<string, unknown>>);
  // The file each borrowed component came from, by `<kind>/<name>`: borrowed once, however often referred to.
  const borrowed = new Map<string, string>();

  const borrow = (file: string, kind: string, name: string): void => {
    const key = `${kind}/${name}`;
    const from = borrowed.get(key);
    if (from === file) return;
    if (from !== undefined) throw new Error(`components/${kind}/${name} is borrowed from ${from} and from ${file}: give one of them another name`);
    const source = others[file];
    if (source === undefined) throw new Error(`a reference into ${file}, which is not given`);
    const definition = ((source.components as Record<string, Record<string, unknown>> | undefined)?.[kind] ?? {})[name];
    if (definition === undefined) throw new Error(`a reference to ${file}#/components/${kind}/${name}, which ${file} does not define`);
    // Its own references are into its own file: made references into that file, then localised.
    const copy = localise(structuredClone(definition), file);
    const section = (components[kind] ??= {});
    if (Object.hasOwn(section, name)) {
      throw new Error(`components/${kind}/${name} is defined in the document and borrowed from ${file} as well: give one of them another name`);
    }
    borrowed.set(key, file);
    section[name] = copy;
    walk(copy, file);
  };

  /** Makes `#/...` references of a component taken from `file` references into `file`, for walk() to borrow. */
  const localise = (node: unknown, file: string): unknown => {
    if (Array.isArray(node)) return node.map((n) => localise(n, file));
    if (node === null || typeof node !== 'object') return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `${file}${v}` : localise(v, file);
    return out;
  };

  const walk = (node: unknown, from: string | null): void => {
    if (Array.isArray(node)) {
      for (const n of node) walk(n, from);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const object = node as Json;
    const ref = object.$ref;
    if (typeof ref === 'string' && !ref.startsWith('#')) {
      const match = /^([^#]+)#\/components\/([A-Za-z]+)\/([^/]+)$/.exec(ref);
      if (!match) throw new Error(`only references to another file's components are bundled: ${ref}`);
      const [, file, kind, name] = match as unknown as [string, string, string, string];
      object.$ref = `#/components/${kind}/${name}`;
      borrow(file, kind, name);
    }
    for (const [k, v] of Object.entries(object)) if (k !== '$ref') walk(v, from);
  };

  walk(bundled, null);
  return bundled;
}
