/**
 * Markdown as the console shows it. This file stands in for the sanitising renderer of the
 * console-read branch (same name and props); it shows the text as written, never as HTML, so it
 * is safe whatever the text holds.
 */
export function Markdown({ source }: { source: string }) {
  return <div className="markdown plain-text">{source}</div>;
}
