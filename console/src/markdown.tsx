import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { useMemo } from 'react';
import './reading.css';

/**
 * Markdown written by people (finding descriptions, comments, report text) and by the engine (the
 * threat model), rendered as HTML the page can show: `marked` turns it into HTML (GitHub-flavoured,
 * single line breaks kept), DOMPurify removes everything that could run or fetch (ADR 0035).
 */
const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    // A remote image would tell its host who reads the finding and when (a tracking pixel): an
    // image is shown as a link to it, which the reader may follow or not.
    image({ href, text }) {
      return `<a href="${escapeAttribute(href)}">${escapeText(text || href)}</a>`;
    },
  },
});

function escapeText(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(value: string): string {
  return escapeText(value).replace(/"/g, '&quot;');
}

/** Links may only lead to the web, mail or a place in the page; everything else loses its href. */
const SAFE_LINK = /^(?:https?:|mailto:|#|\/(?!\/))/i;

let hooked = false;
function purifier(): typeof DOMPurify {
  if (!hooked) {
    hooked = true;
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName !== 'A') return;
      const href = node.getAttribute('href');
      if (href === null) return;
      if (!SAFE_LINK.test(href.trim())) {
        node.removeAttribute('href');
        return;
      }
      if (!href.startsWith('#')) {
        // Opened apart from the console, without a handle back to it or a referrer.
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer nofollow');
      }
    });
  }
  return DOMPurify;
}

/** Sanitised HTML of a Markdown text: no scripts, handlers, styles, frames, forms or remote images. */
export function renderMarkdown(source: string): string {
  const html = marked.parse(source) as string;
  return purifier().sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['img', 'style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'svg', 'math'],
    FORBID_ATTR: ['style', 'class', 'id', 'srcset'],
    ALLOW_DATA_ATTR: false,
  });
}

/** A Markdown text rendered safely; `className` styles the block (e.g. `description`). */
export function Markdown({ source, className }: { source: string; className?: string }) {
  const html = useMemo(() => renderMarkdown(source), [source]);
  return (
    <div
      className={className ? `markdown ${className}` : 'markdown'}
      // The HTML comes from renderMarkdown, which DOMPurify has sanitised.
      // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitised by DOMPurify just above
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}
