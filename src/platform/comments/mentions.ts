import { marked, type Token, type Tokens } from 'marked';

/** The mentions of a comment: `@project` and the usernames named, lower-cased, without duplicates. */
export interface Mentions {
  project: boolean;
  usernames: string[];
}

/**
 * `@name` where the `@` does not follow a word character (so `alice@example.com` is no mention)
 * and the name is a username (`[A-Za-z0-9][A-Za-z0-9_.-]{1,38}`); a trailing dot is punctuation.
 */
const MENTION_RE = /(?<![\p{L}\p{N}_.@/-])@([A-Za-z0-9][A-Za-z0-9_.-]{0,38})/gu;

/** Token types whose text is code or raw HTML: a mention there is quoted, not a ping. */
const NOT_PROSE = new Set(['code', 'codespan', 'html']);

function collectText(tokens: Token[] | undefined, out: string[]): void {
  for (const token of tokens ?? []) {
    if (NOT_PROSE.has(token.type)) continue;
    if (token.type === 'list') {
      for (const item of (token as Tokens.List).items) collectText(item.tokens, out);
      continue;
    }
    if (token.type === 'table') {
      const table = token as Tokens.Table;
      for (const cell of table.header) collectText(cell.tokens, out);
      for (const row of table.rows) for (const cell of row) collectText(cell.tokens, out);
      continue;
    }
    // Links: an autolinked e-mail address is no mention; a link's label is prose.
    if (token.type === 'link' && (token as Tokens.Link).href.startsWith('mailto:')) continue;
    const nested = (token as { tokens?: Token[] }).tokens;
    if (nested && nested.length > 0) {
      collectText(nested, out);
      continue;
    }
    if (token.type === 'text' || token.type === 'escape') out.push((token as Tokens.Text).text);
    out.push('\n');
  }
}

/**
 * Finds the pings of a markdown comment with a real markdown lexer, so that mentions inside code
 * spans, fenced or indented code blocks and raw HTML do not ping.
 */
export function parseMentions(content: string): Mentions {
  const parts: string[] = [];
  collectText(marked.lexer(content, { gfm: true }), parts);
  const usernames = new Set<string>();
  let project = false;
  for (const text of parts) {
    for (const match of text.matchAll(MENTION_RE)) {
      const name = (match[1] ?? '').replace(/[.-]+$/, '').toLowerCase();
      if (name.length < 2) continue;
      if (name === 'project') project = true;
      else usernames.add(name);
    }
  }
  return { project, usernames: [...usernames] };
}
