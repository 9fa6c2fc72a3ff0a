import { useId, useState } from 'react';
import { Markdown } from '../markdown.tsx';

/**
 * A Markdown text field with Write and Preview tabs: the preview is the renderer every page uses,
 * so what the writer sees is what readers will see.
 */
export function MarkdownField({
  label,
  name,
  value,
  onChange,
  required,
  rows = 10,
  maxLength,
}: {
  label: string;
  name: string;
  value: string;
  onChange: (value: string) => void;
  required?: boolean;
  rows?: number;
  maxLength?: number;
}) {
  const id = useId();
  const [preview, setPreview] = useState(false);
  return (
    <div className="markdown-field">
      <div className="markdown-field-head">
        <label htmlFor={`${id}-text`}>{label}</label>
        <div role="tablist" aria-label={`${label}: write or preview`} className="button-row">
          <button
            type="button"
            role="tab"
            aria-selected={!preview}
            aria-controls={`${id}-write`}
            onClick={() => setPreview(false)}
          >
            Write
          </button>
          <button
            type="button"
            role="tab"
            aria-selected={preview}
            aria-controls={`${id}-preview`}
            onClick={() => setPreview(true)}
          >
            Preview
          </button>
        </div>
      </div>
      <div id={`${id}-write`} role="tabpanel" hidden={preview}>
        <textarea
          id={`${id}-text`}
          name={name}
          rows={rows}
          value={value}
          required={required}
          maxLength={maxLength}
          onChange={(e) => onChange(e.target.value)}
        />
        <p className="muted small">Markdown: **bold**, `code`, lists, links, fenced code blocks.</p>
      </div>
      <div
        id={`${id}-preview`}
        role="tabpanel"
        hidden={!preview}
        className="card preview"
        data-testid="markdown-preview"
      >
        {value.trim() ? <Markdown source={value} /> : <p className="muted">Nothing to preview.</p>}
      </div>
    </div>
  );
}
