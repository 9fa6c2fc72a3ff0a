import { describe, expect, it } from 'vitest';
import { parseMentions } from './mentions.ts';

describe('parseMentions', () => {
  it('finds @project and usernames in prose, lists, tables, quotes, emphasis and link labels', () => {
    const content = [
      'Hi @Alice, see below.',
      '',
      '- item for @bob.',
      '> quoted @carol',
      '',
      '| a | b |',
      '|---|---|',
      '| @dave | **@erin** |',
      '',
      '[@frank](https://example.test) and @project!',
    ].join('\n');
    expect(parseMentions(content)).toEqual({
      project: true,
      usernames: ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'],
    });
  });

  it('ignores code spans, fenced and indented code, raw HTML and e-mail addresses', () => {
    const content = [
      'Use `@project` in `notify(@bob)`; mail ops@project.example or <carol@example.test>.',
      '',
      '```',
      '@dave',
      '```',
      '',
      '    @erin',
      '',
      '<div>@frank</div>',
    ].join('\n');
    expect(parseMentions(content)).toEqual({ project: false, usernames: [] });
  });

  it('names each user once and keeps dots and dashes inside names', () => {
    expect(parseMentions('@kai.sato @kai.sato, @li-wei. @x')).toEqual({
      project: false,
      usernames: ['kai.sato', 'li-wei'],
    });
  });
});
