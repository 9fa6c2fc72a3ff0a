import { useQuery } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { api, unwrap } from './api.ts';
import './reading.css';

/** A Prism token stream, as `Prism.tokenize` returns it. */
type TokenStream = Array<string | { type: string; alias?: string | string[]; content: TokenStream | string }>;

interface Highlighter {
  /** The token stream of `code` in `language`, or null when Prism has no grammar for it. */
  tokenize(code: string, language: string): TokenStream | null;
}

/** Language names as findings carry them (file extensions, common names) → Prism grammar names. */
const LANGUAGE_ALIASES: Record<string, string> = {
  sol: 'solidity',
  solidity: 'solidity',
  js: 'javascript',
  javascript: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  html: 'markup',
  xml: 'markup',
  css: 'css',
};

/**
 * Loads Prism with the Solidity grammar when a page first shows code, so that the first page of
 * the console does not carry it (ADR 0036). Prism is told not to highlight the document by itself.
 */
async function loadHighlighter(): Promise<Highlighter> {
  (window as unknown as { Prism?: { manual: boolean } }).Prism = { manual: true };
  const Prism = (await import('prismjs')).default;
  await import('prismjs/components/prism-solidity.js');
  return {
    tokenize(code, language) {
      const grammar = Prism.languages[language];
      return grammar ? (Prism.tokenize(code, grammar) as TokenStream) : null;
    },
  };
}

/** One piece of a line: its text and the token classes it carries. */
interface Piece {
  text: string;
  classes: string;
}

/** Flattens a token stream into lines of pieces (tokens that span lines are cut at each break). */
function toLines(stream: TokenStream, classes = '', lines: Piece[][] = [[]]): Piece[][] {
  for (const token of stream) {
    if (typeof token === 'string') {
      const parts = token.split('\n');
      parts.forEach((part, i) => {
        if (i > 0) lines.push([]);
        if (part) lines[lines.length - 1]?.push({ text: part, classes });
      });
      continue;
    }
    const alias = token.alias ? (Array.isArray(token.alias) ? token.alias : [token.alias]) : [];
    // Prefixed: Prism's own names (`comment`, `tag`, …) are also class names of the console's.
    const own = [token.type, ...alias].map((name) => `tok-${name}`).join(' ');
    const inner = typeof token.content === 'string' ? [token.content] : token.content;
    toLines(inner, classes ? `${classes} ${own}` : own, lines);
  }
  return lines;
}

/** The Prism grammar name for a finding's `language` (or its file's extension), if any. */
export function grammarOf(language: string | null | undefined, path: string): string | null {
  const byName = language ? LANGUAGE_ALIASES[language.toLowerCase()] : undefined;
  if (byName) return byName;
  const ext = path.split('.').pop()?.toLowerCase() ?? '';
  return LANGUAGE_ALIASES[ext] ?? null;
}

/**
 * Code with line numbers, highlighted for its language once Prism has loaded (plain until then),
 * the lines in `marked` shown as the finding's. `firstLine` numbers the first line of `code`.
 */
export function CodeView({
  code,
  language,
  path,
  firstLine,
  marked,
}: {
  code: string;
  language: string | null | undefined;
  path: string;
  firstLine: number;
  marked: { start: number; end: number } | null;
}) {
  const grammar = grammarOf(language, path);
  const highlighter = useQuery({
    queryKey: ['module', 'prism'],
    queryFn: loadHighlighter,
    enabled: grammar !== null,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const stream = (grammar && highlighter.data?.tokenize(code, grammar)) || [code];
  const lines = toLines(stream);
  // A trailing line break ends the last line; it does not start an empty one.
  if (lines.length > 1 && lines[lines.length - 1]?.length === 0) lines.pop();
  return (
    <pre
      className="code-view"
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable to be scrolled by keyboard
      tabIndex={0}
      data-language={grammar ?? 'text'}
      data-highlighted={grammar !== null && highlighter.data ? 'true' : 'false'}
    >
      <code>
        {lines.map((pieces, i) => {
          const n = firstLine + i;
          const isMarked = marked !== null && n >= marked.start && n <= marked.end;
          return (
            <span
              // Lines have no identity of their own; their number is their place.
              // biome-ignore lint/suspicious/noArrayIndexKey: a line is its index
              key={i}
              className={isMarked ? 'line marked' : 'line'}
              data-line={n}
            >
              <span className="line-number" aria-hidden="true">
                {n}
              </span>
              <span className="line-text">{renderPieces(pieces)}</span>
              {isMarked && <span className="sr-only"> (finding line)</span>}
              {'\n'}
            </span>
          );
        })}
      </code>
    </pre>
  );
}

function renderPieces(pieces: Piece[]): ReactNode[] {
  return pieces.map((p, i) =>
    p.classes ? (
      // biome-ignore lint/suspicious/noArrayIndexKey: pieces of a line have only their position
      <span key={i} className={p.classes}>
        {p.text}
      </span>
    ) : (
      p.text
    ),
  );
}

/** A web address of a file or commit on the repository's source host, when the host is one Vigil knows. */
export interface SourceLinks {
  commit: string;
  file: string | null;
}

/**
 * Links to a commit (and to the file at that commit, at its lines) on the repository's source
 * host, read from the repository's address: GitHub, GitLab, Bitbucket and Gitea/Codeberg style
 * hosts are recognised; for any other address no link is made (ADR 0036).
 */
export function sourceLinks(
  repositoryUrl: string | null | undefined,
  commit: string | null | undefined,
  path: string,
  lines: { start: number; end: number } | null,
): SourceLinks | null {
  if (!repositoryUrl || !commit || !/^[0-9a-f]{7,64}$/i.test(commit)) return null;
  let url: URL;
  try {
    url = new URL(repositoryUrl);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:') return null;
  const repo = url.pathname.replace(/\.git$/, '').replace(/\/+$/, '');
  if (!/^\/[\w.-]+\/[\w.-]+(\/[\w.-]+)*$/.test(repo)) return null;
  const base = `${url.origin}${repo}`;
  const file = path
    .split('/')
    .filter((s) => s && s !== '.' && s !== '..')
    .map(encodeURIComponent)
    .join('/');
  const host = url.hostname.toLowerCase();
  if (host === 'github.com' || host.endsWith('.github.com')) {
    const anchor = lines ? `#L${lines.start}-L${lines.end}` : '';
    return {
      commit: `${base}/commit/${commit}`,
      file: file ? `${base}/blob/${commit}/${file}${anchor}` : null,
    };
  }
  if (host === 'gitlab.com' || host.startsWith('gitlab.')) {
    const anchor = lines ? `#L${lines.start}-${lines.end}` : '';
    return {
      commit: `${base}/-/commit/${commit}`,
      file: file ? `${base}/-/blob/${commit}/${file}${anchor}` : null,
    };
  }
  if (host === 'bitbucket.org') {
    const anchor = lines ? `#lines-${lines.start}:${lines.end}` : '';
    return {
      commit: `${base}/commits/${commit}`,
      file: file ? `${base}/src/${commit}/${file}${anchor}` : null,
    };
  }
  if (host === 'codeberg.org' || host.startsWith('gitea.')) {
    const anchor = lines ? `#L${lines.start}-L${lines.end}` : '';
    return {
      commit: `${base}/commit/${commit}`,
      file: file ? `${base}/src/commit/${commit}/${file}${anchor}` : null,
    };
  }
  return null;
}

/** A related file of a finding as the API gives it. */
export interface RelatedFile {
  id: string;
  path: string;
  lines: { start: number; end: number } | null;
  language: string | null;
  relevantContent: string | null;
  commit?: string | null;
}

/**
 * The files and lines of a finding: each file's code with line numbers and highlighting, the
 * finding's lines marked, and links to the file and commit on the source host when the
 * repository's address names a known host and the file carries its commit.
 */
export function RelatedFiles({ files, repositoryId }: { files: RelatedFile[]; repositoryId: string }) {
  const anyCommit = files.some((f) => f.commit);
  const repository = useQuery({
    queryKey: ['repository', repositoryId],
    queryFn: () =>
      unwrap(api.GET('/api/v0/repositories/{repo_id}', { params: { path: { repo_id: repositoryId } } })),
    enabled: anyCommit,
  });
  if (files.length === 0) return <p className="muted">No related files.</p>;
  const repositoryUrl = repository.data?.url ?? null;
  return (
    <>
      {files.map((file) => {
        const links = sourceLinks(repositoryUrl, file.commit, file.path, file.lines);
        return (
          <figure key={file.id} className="code">
            <figcaption>
              {links?.file ? (
                <a href={links.file} target="_blank" rel="noopener noreferrer">
                  <code>{file.path}</code>
                </a>
              ) : (
                <code>{file.path}</code>
              )}
              {file.lines ? ` lines ${file.lines.start}–${file.lines.end}` : ''}
              {file.commit && (
                <>
                  {' · commit '}
                  {links ? (
                    <a href={links.commit} target="_blank" rel="noopener noreferrer">
                      <code>{file.commit.slice(0, 12)}</code>
                    </a>
                  ) : (
                    <code>{file.commit.slice(0, 12)}</code>
                  )}
                </>
              )}
            </figcaption>
            {file.relevantContent && (
              <CodeView
                code={file.relevantContent}
                language={file.language}
                path={file.path}
                firstLine={file.lines?.start || 1}
                marked={file.lines}
              />
            )}
          </figure>
        );
      })}
    </>
  );
}
