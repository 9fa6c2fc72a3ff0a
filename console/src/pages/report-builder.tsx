import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import type { paths } from '../../../src/sdk/schema';
import { ApiError, api, unwrap } from '../api.ts';
import { NotFound } from '../router.tsx';
import { mayMakeReports, useSession } from '../session.tsx';
import { Async, Chip, ErrorMessage } from '../ui.tsx';
import { MarkdownField } from './markdown-field.tsx';
import { type Report, ReportView } from './report-view.tsx';

type Listed =
  paths['/api/v0/repositories/all-findings']['get']['responses'][200]['content']['application/json']['findings'][number];
type Reportable = Listed & { status?: string; severity?: string };

/** The statuses a report lists (the server's rule; the builder offers only these). */
const REPORTED = 'confirmed,acknowledged,fixed';
const PAGE = 100;

/** Every reportable finding of the repository, page by page. */
async function reportableFindings(repoId: string): Promise<Reportable[]> {
  const out: Reportable[] = [];
  let next: string | undefined;
  for (;;) {
    const page = await unwrap(
      api.GET('/api/v0/repositories/all-findings', {
        params: {
          query: { repositories: [repoId], status: REPORTED, order_by: 'number_asc', limit: PAGE, next },
        },
      }),
    );
    out.push(...page.findings);
    if (!page.nextValue) return out;
    next = page.nextValue;
  }
}

/**
 * Building a report of a finished repository (its company's managers and its admins): choose the findings, write
 * the summary, preview the draft as readers will see it, then publish it public or private.
 */
export function ReportBuilderPage() {
  const { repoId } = useParams({ from: '/repositories/$repoId/report' });
  const session = useSession();
  const navigate = useNavigate();
  const client = useQueryClient();
  const repo = useQuery({
    queryKey: ['repository', repoId],
    queryFn: () =>
      unwrap(api.GET('/api/v0/repositories/{repo_id}', { params: { path: { repo_id: repoId } } })),
  });
  const findings = useQuery({ queryKey: ['reportable', repoId], queryFn: () => reportableFindings(repoId) });
  const [chosen, setChosen] = useState<Set<string> | null>(null);
  const [projectTitle, setProjectTitle] = useState('');
  const [clientName, setClientName] = useState('');
  const [description, setDescription] = useState('');
  const [draft, setDraft] = useState<Report | null>(null);
  const [publishPublic, setPublishPublic] = useState(false);

  useEffect(() => {
    if (findings.data && chosen === null) setChosen(new Set(findings.data.map((f) => f.id)));
  }, [findings.data, chosen]);
  useEffect(() => {
    if (repo.data && !projectTitle) setProjectTitle(repo.data.name);
  }, [repo.data, projectTitle]);

  const preview = useMutation({
    mutationFn: async () => {
      const fields = {
        findingIds: [...(chosen ?? [])],
        projectTitle: projectTitle.trim() || undefined,
        description,
        ...(clientName.trim() ? { clientName: clientName.trim() } : {}),
      };
      return draft
        ? unwrap(
            api.PATCH('/api/v0/reports/{report_id}', {
              params: { path: { report_id: draft.id } },
              body: fields,
            }),
          )
        : unwrap(api.POST('/api/v0/reports', { body: { repositoryId: repoId, ...fields } }));
    },
    onSuccess: (report) => setDraft(report),
  });
  const publish = useMutation({
    mutationFn: (report: Report) =>
      unwrap(
        api.POST('/api/v0/reports/{report_id}/publish', {
          params: { path: { report_id: report.id } },
          body: { isPrivate: !publishPublic },
        }),
      ),
    onSuccess: async (report) => {
      await client.invalidateQueries({ queryKey: ['reports'] });
      client.setQueryData(['report', report.id], report);
      await navigate({ to: '/reports/$reportId', params: { reportId: report.id } });
    },
  });

  if (repo.error instanceof ApiError && repo.error.status === 404) return <NotFound />;
  return (
    <Async query={repo}>
      {(r) => {
        if (!mayMakeReports(session, r.id, r.company.id))
          return (
            <section>
              <h1>New report</h1>
              <p className="notice">
                Only the company’s managers and the repository’s admins make its reports.
              </p>
            </section>
          );
        if (!r.finishedAt)
          return (
            <section>
              <h1>New report of {r.name}</h1>
              <p className="notice">
                The repository is not finished; finish it before making its report.{' '}
                <Link to="/repositories/$repoId" params={{ repoId }}>
                  Back to {r.name}
                </Link>
              </p>
            </section>
          );
        return (
          <section className="report-builder">
            <p className="muted no-print">
              <Link to="/repositories/$repoId" params={{ repoId }}>
                {r.name}
              </Link>
            </p>
            <h1 className="no-print">New report of {r.name}</h1>
            <form
              className="stack no-print"
              onSubmit={(e) => {
                e.preventDefault();
                preview.mutate();
              }}
            >
              <label>
                Title
                <input
                  name="projectTitle"
                  required
                  maxLength={300}
                  value={projectTitle}
                  onChange={(e) => setProjectTitle(e.target.value)}
                />
              </label>
              <label>
                Client name <span className="muted small">(the company’s name when empty)</span>
                <input
                  name="clientName"
                  maxLength={200}
                  value={clientName}
                  onChange={(e) => setClientName(e.target.value)}
                />
              </label>
              <MarkdownField
                label="Summary"
                name="description"
                value={description}
                onChange={setDescription}
              />
              <fieldset>
                <legend>Findings ({chosen?.size ?? 0} chosen)</legend>
                <Async query={findings}>
                  {(list) =>
                    list.length === 0 ? (
                      <p className="muted">
                        No confirmed, acknowledged or fixed findings: the report will list none.
                      </p>
                    ) : (
                      <>
                        <div className="button-row">
                          <button type="button" onClick={() => setChosen(new Set(list.map((f) => f.id)))}>
                            Choose all
                          </button>
                          <button type="button" onClick={() => setChosen(new Set())}>
                            Choose none
                          </button>
                        </div>
                        <ul className="choices">
                          {list.map((f) => (
                            <li key={f.id}>
                              <label>
                                <input
                                  type="checkbox"
                                  name="finding"
                                  value={f.id}
                                  checked={chosen?.has(f.id) ?? false}
                                  onChange={(e) =>
                                    setChosen((prev) => {
                                      const next = new Set(prev ?? []);
                                      if (e.target.checked) next.add(f.id);
                                      else next.delete(f.id);
                                      return next;
                                    })
                                  }
                                />
                                #{f.number} {f.title} <Chip kind="severity" value={f.severity} />{' '}
                                <Chip kind="status" value={f.status} />
                              </label>
                            </li>
                          ))}
                        </ul>
                      </>
                    )
                  }
                </Async>
              </fieldset>
              {preview.error && <ErrorMessage error={preview.error} />}
              <div className="button-row">
                <button type="submit" disabled={preview.isPending || chosen === null}>
                  {draft ? 'Update the preview' : 'Preview the report'}
                </button>
              </div>
            </form>
            {draft && (
              <section aria-labelledby="preview-heading" className="report-preview">
                <h2 id="preview-heading" className="no-print">
                  Preview (draft, visible to the company and the repository’s admins only)
                </h2>
                <div className="card">
                  <ReportView report={draft} />
                </div>
                <fieldset className="no-print">
                  <legend>Publish</legend>
                  <label>
                    <input
                      type="radio"
                      name="visibility"
                      checked={!publishPublic}
                      onChange={() => setPublishPublic(false)}
                    />{' '}
                    Private: the company’s users and the repository’s admins only
                  </label>
                  <label>
                    <input
                      type="radio"
                      name="visibility"
                      checked={publishPublic}
                      onChange={() => setPublishPublic(true)}
                    />{' '}
                    Public: anyone, signed in or not
                  </label>
                  {publish.error && <ErrorMessage error={publish.error} />}
                  <button type="button" disabled={publish.isPending} onClick={() => publish.mutate(draft)}>
                    Publish the report
                  </button>
                </fieldset>
              </section>
            )}
          </section>
        );
      }}
    </Async>
  );
}
