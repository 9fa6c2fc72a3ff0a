import type { paths } from '../../../src/sdk/schema';
import { SEVERITIES } from '../search.ts';

type Report = paths['/api/v0/reports/{report_id}']['get']['responses'][200]['content']['application/json'];

/** A report's statistics: per severity, in severity order, how many findings and how many fixed. */
export function ReportStats({ stats }: { stats: Report['findingStats'] }) {
  const rows = [...stats].sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity));
  if (rows.length === 0) return <p className="muted">No findings.</p>;
  return (
    <div className="table-wrap">
      <table className="report-stats">
        <caption className="sr-only">Findings by severity</caption>
        <thead>
          <tr>
            <th scope="col">Severity</th>
            <th scope="col">Findings</th>
            <th scope="col">Fixed</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((s) => (
            <tr key={s.severity}>
              <th scope="row">
                <span className={`chip severity-${s.severity}`}>{s.severity.replace(/_/g, ' ')}</span>
              </th>
              <td>{s.totalCount}</td>
              <td>
                {s.fixedCount} of {s.totalCount}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
