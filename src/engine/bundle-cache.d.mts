/** See bundle-cache.mjs. */
export function bundleOf(name: string, entry: string): Promise<URL | undefined>;
