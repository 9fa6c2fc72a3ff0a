import { describe, expect, it } from 'vitest';
import { compactJson } from './json.ts';

describe('compactJson', () => {
  it('leaves out the white space between tokens and keeps every string as it is', () => {
    const text = '{"a" : 1, "b" : [1, 2,\n {"c" : "x : y, \\" z"}], "d" : "tab\\there \\\\"}\t';
    const compact = compactJson(text);
    expect(compact).toBe('{"a":1,"b":[1,2,{"c":"x : y, \\" z"}],"d":"tab\\there \\\\"}');
    expect(JSON.parse(compact)).toEqual(JSON.parse(text));
  });

  it('returns a text without white space as it is', () => {
    const text = '{"a":"b c"}';
    expect(compactJson(text)).toBe(text);
  });
});
