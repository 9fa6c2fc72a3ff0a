/**
 * A gzipped tar (ustar) of files chosen in the browser, for folder uploads: regular files only,
 * paths relative to the chosen folder.
 */
export async function tarGzip(files: Array<{ path: string; file: Blob }>): Promise<Blob> {
  const encoder = new TextEncoder();
  const parts: BlobPart[] = [];
  for (const { path, file } of files) {
    const header = new Uint8Array(512);
    let name = path;
    let prefix = '';
    if (encoder.encode(name).length > 100) {
      const cut = name.lastIndexOf('/', 155);
      if (cut <= 0 || encoder.encode(name.slice(cut + 1)).length > 100)
        throw new Error(`Path too long for tar: ${path}`);
      prefix = name.slice(0, cut);
      name = name.slice(cut + 1);
    }
    const put = (offset: number, value: string) => header.set(encoder.encode(value), offset);
    const octal = (n: number, width: number) => n.toString(8).padStart(width - 1, '0');
    put(0, name);
    put(100, `${octal(0o644, 8)}\0`);
    put(108, `${octal(0, 8)}\0`);
    put(116, `${octal(0, 8)}\0`);
    put(124, `${octal(file.size, 12)}\0`);
    put(136, `${octal(Math.floor(Date.now() / 1000), 12)}\0`);
    put(148, '        ');
    put(156, '0');
    put(257, 'ustar\0');
    put(263, '00');
    put(345, prefix);
    const sum = header.reduce((a, b) => a + b, 0);
    put(148, `${octal(sum, 7)}\0 `);
    parts.push(header, file);
    const pad = (512 - (file.size % 512)) % 512;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(1024));
  const stream = new Blob(parts).stream().pipeThrough(new CompressionStream('gzip'));
  return new Response(stream).blob();
}

/** SHA-256 of a blob as hex. */
export async function sha256Hex(blob: Blob): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', await blob.arrayBuffer());
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
