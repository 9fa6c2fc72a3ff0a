import { type ReactNode, type RefObject, useLayoutEffect, useRef } from 'react';
import { ApiError } from './api.ts';

/** An error shown where it happened, with the server's own message. */
export function ErrorMessage({ error }: { error: unknown }) {
  const message =
    error instanceof ApiError
      ? `${error.message}${error.code ? ` (${error.code})` : ''}`
      : error instanceof Error
        ? error.message
        : String(error);
  const status = error instanceof ApiError ? error.status : null;
  return (
    <div className="error" role="alert">
      <strong>{status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : 'Error'}:</strong> {message}
    </div>
  );
}

/** Loading, error or the content of a query. */
export function Async<T>({
  query,
  children,
}: {
  query: { isPending: boolean; error: unknown; data: T | undefined };
  children: (data: T) => ReactNode;
}) {
  if (query.error) return <ErrorMessage error={query.error} />;
  if (query.isPending || query.data === undefined)
    return (
      <p className="muted" role="status">
        Loading…
      </p>
    );
  return <>{children(query.data)}</>;
}

export function formatDate(value: string | null | undefined): string {
  if (!value) return '—';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? value : d.toISOString().slice(0, 16).replace('T', ' ');
}

/** An API value as words: `gas_optimization` → `gas optimization`. */
export const words = (value: string) => value.replace(/_/g, ' ');

/** A status or severity as a labelled chip. */
export function Chip({ kind, value }: { kind: 'status' | 'severity'; value: string | null | undefined }) {
  if (!value) return <span className="muted">—</span>;
  return <span className={`chip ${kind}-${value}`}>{words(value)}</span>;
}

/**
 * Places the caret of a text field once the text set in the same event has been rendered, before
 * the browser handles the next key: a caret placed later (in an animation frame) could land after
 * keys typed in between and move them.
 */
export function usePlaceCaret(field: RefObject<HTMLInputElement | HTMLTextAreaElement | null>) {
  const pending = useRef<number | null>(null);
  useLayoutEffect(() => {
    const pos = pending.current;
    if (pos === null) return;
    pending.current = null;
    field.current?.focus();
    field.current?.setSelectionRange(pos, pos);
  });
  return (pos: number) => {
    pending.current = pos;
  };
}
