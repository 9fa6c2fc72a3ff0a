import { useId, useState } from 'react';
import { canTransition, type RepositoryRole, statusChangeNeedsReason } from '../../../src/access/rules.ts';
import { type SEVERITIES, STATUSES } from '../search.ts';
import { ErrorMessage } from '../ui.tsx';

type Status = (typeof STATUSES)[number];
type Severity = (typeof SEVERITIES)[number];

const human = (s: string) => s.replace(/_/g, ' ');

/**
 * The status of a finding: a chosen transition is confirmed before it is sent, with a reason when
 * the change needs one (the server's rule, `statusChangeNeedsReason`); the last change can be
 * undone while the reverse transition is allowed.
 */
export function StatusControl({
  role,
  status,
  isAuthor,
  busy,
  error,
  onChange,
}: {
  role: RepositoryRole | null;
  status: Status;
  isAuthor: boolean;
  busy: boolean;
  error: unknown;
  onChange: (status: Status, reason: string | undefined, then: () => void) => void;
}) {
  const id = useId();
  const [target, setTarget] = useState<Status | null>(null);
  const [reason, setReason] = useState('');
  const [undo, setUndo] = useState<Status | null>(null);
  const allowed = role
    ? STATUSES.filter((s) => s !== status && canTransition(role, status, s, isAuthor))
    : [];
  const needsReason = target !== null && statusChangeNeedsReason(status, target);
  const mayUndo =
    undo !== null && undo !== status && role !== null && canTransition(role, status, undo, isAuthor);
  const choose = (s: Status) => {
    setTarget(s);
    setReason('');
  };
  return (
    <div className="field">
      <span className="label" id={`${id}-label`}>
        Status
      </span>
      {allowed.length === 0 ? (
        <p className="muted">Your role cannot change the status from “{human(status)}”.</p>
      ) : target === null ? (
        <fieldset className="button-row plain" aria-labelledby={`${id}-label`}>
          {allowed.map((s) => (
            <button key={s} type="button" onClick={() => choose(s)} disabled={busy}>
              {human(s)}
            </button>
          ))}
        </fieldset>
      ) : (
        <form
          className="stack confirm"
          aria-label={`Change the status to ${human(target)}`}
          onSubmit={(e) => {
            e.preventDefault();
            const from = status;
            onChange(target, reason.trim() || undefined, () => {
              setUndo(from);
              setTarget(null);
            });
          }}
        >
          <p>
            Change the status from <strong>{human(status)}</strong> to <strong>{human(target)}</strong>?
          </p>
          <label htmlFor={`${id}-reason`}>
            Reason{needsReason ? ' (required, posted on the finding)' : ' (optional, posted on the finding)'}
          </label>
          <textarea
            id={`${id}-reason`}
            rows={3}
            value={reason}
            required={needsReason}
            maxLength={5000}
            onChange={(e) => setReason(e.target.value)}
          />
          <div className="button-row">
            <button type="submit" disabled={busy || (needsReason && !reason.trim())}>
              {busy ? 'Applying…' : `Set ${human(target)}`}
            </button>
            <button type="button" onClick={() => setTarget(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {mayUndo && target === null && (
        <p className="small" role="status">
          Status changed.{' '}
          <button
            type="button"
            onClick={() => {
              if (statusChangeNeedsReason(status, undo)) choose(undo);
              else onChange(undo, undefined, () => setUndo(null));
            }}
            disabled={busy}
          >
            Undo (back to {human(undo)})
          </button>
        </p>
      )}
      {error ? <ErrorMessage error={error} /> : null}
    </div>
  );
}

/** The severity: chosen in the list, applied only with the button (arrows in the list send nothing). */
export function SeverityControl({
  severity,
  allowed,
  busy,
  error,
  onApply,
}: {
  severity: Severity | null;
  allowed: readonly Severity[];
  busy: boolean;
  error: unknown;
  onApply: (severity: Severity) => void;
}) {
  const [choice, setChoice] = useState<Severity | ''>(severity ?? '');
  return (
    <form
      className="field"
      onSubmit={(e) => {
        e.preventDefault();
        if (choice) onApply(choice);
      }}
    >
      <label htmlFor="severity">Severity</label>
      <div className="inline-form">
        <select id="severity" value={choice} onChange={(e) => setChoice(e.target.value as Severity)}>
          {severity === null && <option value="">—</option>}
          {allowed.map((s) => (
            <option key={s} value={s}>
              {human(s)}
            </option>
          ))}
        </select>
        <button type="submit" disabled={busy || !choice || choice === severity}>
          Apply severity
        </button>
      </div>
      {error ? <ErrorMessage error={error} /> : null}
    </form>
  );
}
