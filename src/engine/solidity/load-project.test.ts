import { describe, expect, it } from 'vitest';
import { filesToStart } from './load-project.ts';

const MB = 1024 * 1024;

describe('filesToStart (the project loader parsing ahead)', () => {
  const paths = ['a.sol', 'b.sol', 'c.sol', 'd.sol', 'e.sol', 'f.sol', 'g.sol'];
  const small = () => 10_000;

  it('starts the file to convert and the next four', () => {
    expect(filesToStart(paths, 0, new Map(), small)).toEqual(['a.sol', 'b.sol', 'c.sol', 'd.sol', 'e.sol']);
    // b to e are started already: the window moves one file on.
    const started = new Map(['b.sol', 'c.sol', 'd.sol', 'e.sol'].map((p) => [p, true]));
    expect(filesToStart(paths, 1, started, small)).toEqual(['f.sol']);
    expect(filesToStart(paths, 6, new Map([['g.sol', true]]), small)).toEqual([]);
  });

  it('holds no more than 4 MB of source beyond the file being converted', () => {
    const sizes: Record<string, number> = { 'a.sol': 9 * MB, 'b.sol': 3 * MB, 'c.sol': 3 * MB };
    const sizeOf = (p: string) => sizes[p] ?? 1000;
    // The file to convert is started whatever its size; c would bring b and c to 6 MB.
    expect(filesToStart(paths, 0, new Map(), sizeOf)).toEqual(['a.sol', 'b.sol']);
    expect(filesToStart(paths, 1, new Map([['b.sol', true]]), sizeOf)).toEqual([
      'c.sol',
      'd.sol',
      'e.sol',
      'f.sol',
    ]);
  });

  it('starts a path listed twice once', () => {
    expect(filesToStart(['a.sol', 'a.sol', 'b.sol'], 0, new Map(), small)).toEqual(['a.sol', 'b.sol']);
  });
});
