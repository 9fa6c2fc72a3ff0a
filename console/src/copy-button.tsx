import { useState } from 'react';

/**
 * Copies a secret shown once (a new service key) to the clipboard and says so; where the
 * clipboard is refused, it says to select the text instead.
 */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <>
      <button
        type="button"
        aria-label={label}
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setState('copied'),
            () => setState('failed'),
          )
        }
      >
        Copy
      </button>
      <span role="status" className="small">
        {state === 'copied'
          ? 'Copied.'
          : state === 'failed'
            ? 'The browser refused; select and copy it.'
            : ''}
      </span>
    </>
  );
}
