import { useEffect } from 'react';
import type { paths } from '../../../src/sdk/schema';
import { Markdown } from '../markdown.tsx';
import { Chip, formatDate } from '../ui.tsx';

/** A report as GET /api/v0/reports/{report_id} returns it. */
export type Report =
  paths['/api/v0/reports/{report_id}']['get']['responses'][200]['content']['application/json'];

/**
 * The document's title while a report is shown: the browser's tab, its history, and the title of
 * a PDF printed from the page (Chromium writes it into the PDF's metadata).
 */
export function useReportTitle(title: string | undefined) {
  useEffect(() => {
    if (!title) return;
    const before = document.title;
    document.title = `${title} · Vigil`;
    return () => {
      document.title = before;
    };
  }, [title]);
}

/** The print button: the browser's own print dialog, whose "Save as PDF" makes the PDF (print.css lays it out). */
export function PrintButton() {
  return (
    <button type="button" className="no-print" onClick={() => window.print()}>
      Print or save as PDF
    </button>
  );
}

/**
 * The body of a report — header, description, team, statistics by severity, findings with their
 * severity and status — as the report page, the builder's preview and the printed PDF show it.
 */
export function ReportView({ report: r }: { report: Report }) {
  const stats = r.findingStats.filter((s) => s.totalCount > 0);
  return (
    <article className="report">
      <header className="report-head">
        <h1>{r.projectTitle}</h1>
        <p className="muted">
          {r.clientName} · {formatDate(r.engagementStartDate)} → {formatDate(r.engagementEndDate)} ·{' '}
          {r.publishedAt ? `published ${formatDate(r.publishedAt)}` : 'draft'} ·{' '}
          {r.isPrivate ? 'private' : 'public'}
        </p>
      </header>
      {r.description && (
        <section>
          <h2>Summary</h2>
          <Markdown source={r.description} />
        </section>
      )}
      {r.teamMembers.length > 0 && (
        <section>
          <h2>Team</h2>
          <ul>
            {r.teamMembers.map((m) => (
              <li key={m.auditorPublicProfile.id}>
                {m.auditorPublicProfile.name}{' '}
                <span className="muted">@{m.auditorPublicProfile.username}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
      <section>
        <h2>Findings by severity</h2>
        {stats.length === 0 ? (
          <p className="muted">No findings.</p>
        ) : (
          <table className="report-stats">
            <thead>
              <tr>
                <th scope="col">Severity</th>
                <th scope="col">Findings</th>
                <th scope="col">Fixed</th>
              </tr>
            </thead>
            <tbody>
              {stats.map((s) => (
                <tr key={s.severity}>
                  <th scope="row">
                    <Chip kind="severity" value={s.severity} />
                  </th>
                  <td>{s.totalCount}</td>
                  <td>{s.fixedCount}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section>
        <h2>Findings</h2>
        <ol className="report-findings">
          {r.findings.map((f) => (
            <li key={f.id} className="report-finding">
              <h3>
                #{f.number} {f.title}
              </h3>
              <p>
                <Chip kind="severity" value={f.severity} /> <Chip kind="status" value={f.status} />
                {f.createdBy && <span className="muted"> · by @{f.createdBy.username}</span>}
              </p>
              <Markdown source={f.description} />
              {f.relatedFiles.map((file) => (
                <figure key={file.id} className="code">
                  <figcaption>
                    {file.path}
                    {file.lines.start !== null &&
                      `:${file.lines.start}–${file.lines.end ?? file.lines.start}`}
                  </figcaption>
                  {file.relevantContent && <pre>{file.relevantContent}</pre>}
                </figure>
              ))}
            </li>
          ))}
        </ol>
      </section>
    </article>
  );
}
