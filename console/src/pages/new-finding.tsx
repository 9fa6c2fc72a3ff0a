import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import type { paths } from '../../../src/sdk/schema';
import { ApiError, api, unwrap } from '../api.ts';
import { NotFound } from '../router.tsx';
import { Async, ErrorMessage } from '../ui.tsx';
import { MarkdownField } from './markdown-field.tsx';
import { canFile } from './new-finding-roles.ts';

type CreateFinding =
  paths['/api/v0/repositories/{repo_id}/findings']['post']['requestBody']['content']['application/json'];
type Severity = CreateFinding['severity'];

interface FileRow {
  key: number;
  path: string;
  start: string;
  end: string;
  content: string;
}

const languageOf = (path: string) =>
  /\.sol$/i.test(path)
    ? 'solidity'
    : /\.(ts|tsx)$/i.test(path)
      ? 'typescript'
      : /\.(js|mjs|cjs)$/i.test(path)
        ? 'javascript'
        : /\.rs$/i.test(path)
          ? 'rust'
          : /\.vy$/i.test(path)
            ? 'vyper'
            : undefined;

/** Filing a finding: title, an allowed severity, a Markdown description, related files and lines, asset group. */
export function NewFindingPage() {
  const { repoId } = useParams({ from: '/repositories/$repoId/findings/new' });
  const navigate = useNavigate();
  const client = useQueryClient();
  const repo = useQuery({
    queryKey: ['repository', repoId],
    queryFn: () =>
      unwrap(api.GET('/api/v0/repositories/{repo_id}', { params: { path: { repo_id: repoId } } })),
  });
  const [title, setTitle] = useState('');
  const [severity, setSeverity] = useState<Severity | ''>('');
  const [description, setDescription] = useState('');
  const [assetGroupId, setAssetGroupId] = useState('');
  const [files, setFiles] = useState<FileRow[]>([]);
  const [nextKey, setNextKey] = useState(1);
  const [invalid, setInvalid] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: (body: CreateFinding) =>
      unwrap(
        api.POST('/api/v0/repositories/{repo_id}/findings', { params: { path: { repo_id: repoId } }, body }),
      ),
    onSuccess: async (finding) => {
      await client.invalidateQueries({ queryKey: ['all-findings'] });
      await navigate({
        to: '/repositories/$repoId/findings/$findingRef',
        params: { repoId, findingRef: String(finding.number ?? finding.id) },
      });
    },
  });
  if (repo.error instanceof ApiError && repo.error.status === 404) return <NotFound />;

  const setFile = (key: number, change: Partial<FileRow>) =>
    setFiles((rows) => rows.map((r) => (r.key === key ? { ...r, ...change } : r)));

  function submit(allowed: readonly string[]) {
    setInvalid(null);
    if (!severity || !allowed.includes(severity)) return setInvalid('Choose a severity.');
    const relatedFiles: NonNullable<CreateFinding['relatedFiles']> = [];
    for (const f of files) {
      if (!f.path.trim()) continue;
      const start = f.start ? Number(f.start) : undefined;
      const end = f.end ? Number(f.end) : start;
      if (start !== undefined && (end === undefined || end < start)) {
        return setInvalid(`${f.path}: the last line comes before the first.`);
      }
      const language = languageOf(f.path);
      relatedFiles.push({
        path: f.path.trim(),
        ...(start !== undefined && end !== undefined ? { lines: { start, end } } : {}),
        ...(language ? { language } : {}),
        ...(f.content ? { relevantContent: f.content } : {}),
      });
    }
    create.mutate({
      title: title.trim(),
      severity,
      description,
      ...(relatedFiles.length > 0 ? { relatedFiles } : {}),
      ...(assetGroupId ? { assetGroupId } : {}),
    });
  }

  return (
    <Async query={repo}>
      {(r) => {
        const role = (r as { role?: string | null }).role;
        const allowed = r.allowedSeverities;
        return (
          <section className="new-finding">
            <p className="muted">
              <Link to="/repositories/$repoId" params={{ repoId }}>
                {r.name}
              </Link>
            </p>
            <h1>File a finding</h1>
            {!canFile(role) ? (
              <p className="notice">
                Only the repository’s reviewers, judges, triagers and admins file findings; you are{' '}
                {role ? `its ${role}` : 'not a member'}.
              </p>
            ) : (
              <form
                className="stack"
                onSubmit={(e) => {
                  e.preventDefault();
                  submit(allowed);
                }}
              >
                <label>
                  Title
                  <input
                    name="title"
                    required
                    maxLength={500}
                    value={title}
                    onChange={(e) => setTitle(e.target.value)}
                  />
                </label>
                <label>
                  Severity
                  <select
                    name="severity"
                    required
                    value={severity}
                    onChange={(e) => setSeverity(e.target.value as Severity)}
                  >
                    <option value="">Choose…</option>
                    {allowed.map((s) => (
                      <option key={s} value={s}>
                        {s.replace(/_/g, ' ')}
                      </option>
                    ))}
                  </select>
                </label>
                {r.assetGroups.length > 0 && (
                  <label>
                    Asset group
                    <select
                      name="assetGroup"
                      value={assetGroupId}
                      onChange={(e) => setAssetGroupId(e.target.value)}
                    >
                      <option value="">None</option>
                      {r.assetGroups.map((g) => (
                        <option key={g.id} value={g.id}>
                          {g.name}
                          {g.outOfScope ? ' (out of scope)' : ''}
                        </option>
                      ))}
                    </select>
                  </label>
                )}
                <MarkdownField
                  label="Description"
                  name="description"
                  value={description}
                  onChange={setDescription}
                  maxLength={200_000}
                  rows={12}
                />
                <fieldset>
                  <legend>Related files and lines</legend>
                  {files.length === 0 && <p className="muted">None yet.</p>}
                  {files.map((f, i) => (
                    <div key={f.key} className="related-file" data-testid="related-file">
                      <label>
                        Path {i + 1}
                        <input
                          name={`path-${i}`}
                          placeholder="contracts/Vault.sol"
                          value={f.path}
                          onChange={(e) => setFile(f.key, { path: e.target.value })}
                        />
                      </label>
                      <label>
                        First line
                        <input
                          name={`start-${i}`}
                          type="number"
                          min={0}
                          inputMode="numeric"
                          value={f.start}
                          onChange={(e) => setFile(f.key, { start: e.target.value })}
                        />
                      </label>
                      <label>
                        Last line
                        <input
                          name={`end-${i}`}
                          type="number"
                          min={0}
                          inputMode="numeric"
                          value={f.end}
                          onChange={(e) => setFile(f.key, { end: e.target.value })}
                        />
                      </label>
                      <label className="wide">
                        Code (optional)
                        <textarea
                          name={`content-${i}`}
                          rows={4}
                          value={f.content}
                          onChange={(e) => setFile(f.key, { content: e.target.value })}
                        />
                      </label>
                      <button
                        type="button"
                        onClick={() => setFiles((rows) => rows.filter((x) => x.key !== f.key))}
                      >
                        Remove file {i + 1}
                      </button>
                    </div>
                  ))}
                  <button
                    type="button"
                    onClick={() => {
                      setFiles((rows) => [
                        ...rows,
                        { key: nextKey, path: '', start: '', end: '', content: '' },
                      ]);
                      setNextKey((k) => k + 1);
                    }}
                  >
                    Add a file
                  </button>
                </fieldset>
                {invalid && (
                  <p className="error" role="alert">
                    {invalid}
                  </p>
                )}
                {create.error && <ErrorMessage error={create.error} />}
                <div className="button-row">
                  <button type="submit" disabled={create.isPending}>
                    {create.isPending ? 'Filing…' : 'File the finding'}
                  </button>
                  <Link to="/repositories/$repoId" params={{ repoId }}>
                    Cancel
                  </Link>
                </div>
              </form>
            )}
          </section>
        );
      }}
    </Async>
  );
}
