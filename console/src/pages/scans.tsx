import { useInfiniteQuery, useMutation, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { ApiError, api, sessionHeaders, sessionState, unwrap } from '../api.ts';
import { Markdown } from '../markdown.tsx';
import { NotFound } from '../router.tsx';
import { sha256Hex, tarGzip } from '../tar.ts';
import { useConnectedTrackers } from '../trackers.ts';
import { Async, ErrorMessage, formatDate } from '../ui.tsx';
import { WorkspaceWithOverview } from '../workspaces.tsx';
import { ScanDrafts } from './scan-drafts.tsx';

type ScanType = 'lite' | 'standard' | 'audit';
/** The only type the API accepts for local-source (uploaded) archives. */
const UPLOAD_SCAN_TYPE: ScanType = 'standard';
const FINAL = new Set(['completed', 'failed', 'cancelled']);

/** PUT to the signed upload URL with progress (fetch has no upload progress; XHR does). */
function putWithProgress(
  url: string,
  headers: Record<string, string>,
  body: Blob,
  onProgress: (f: number) => void,
) {
  return new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      let message = `The upload failed with ${xhr.status}.`;
      try {
        const body = JSON.parse(xhr.responseText) as { error?: string };
        if (body.error) message = body.error;
      } catch {}
      reject(new ApiError(message, xhr.status, null));
    };
    xhr.onerror = () => reject(new ApiError('The upload could not reach the server.', 0, null));
    xhr.send(body);
  });
}

const SCAN_STATUSES = ['preparing', 'queued', 'running', 'completed', 'failed', 'cancelled'] as const;
type ScanStatusName = (typeof SCAN_STATUSES)[number];

const SCANS_PAGE = 50;

/**
 * The company's scans from the scanner API, newest first, filtered by status, in pages ("Load
 * more" follows the list's cursor); refreshed while any loaded scan runs.
 */
export function CompanyScans({ companyId }: { companyId: string }) {
  sessionState.companyId = companyId;
  const [status, setStatus] = useState<ScanStatusName | ''>('');
  const scans = useInfiniteQuery({
    queryKey: ['scans', companyId, status, 'pages'],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      unwrap(
        api.GET('/api/scanner/v1/scans', {
          params: { query: { limit: SCANS_PAGE, next: pageParam, ...(status ? { status } : {}) } },
        }),
      ),
    getNextPageParam: (last) => last.nextValue || undefined,
    refetchInterval: (q) =>
      q.state.data?.pages.some((p) => p.scans.some((x) => !FINAL.has(x.status))) ? 3000 : false,
  });
  return (
    <section aria-labelledby="company-scans-h">
      <h3 id="company-scans-h">The company’s scans</h3>
      <label>
        Status{' '}
        <select value={status} onChange={(e) => setStatus(e.target.value as ScanStatusName | '')}>
          <option value="">any</option>
          {SCAN_STATUSES.map((x) => (
            <option key={x} value={x}>
              {x}
            </option>
          ))}
        </select>
      </label>
      <Async query={scans}>
        {({ pages }) =>
          pages[0]?.scans.length === 0 ? (
            <p className="muted">No scans{status ? ` with status ${status}` : ''}.</p>
          ) : (
            <div className="table-wrap">
              <table className="scans" data-testid="scans-table">
                <thead>
                  <tr>
                    <th scope="col">Started</th>
                    <th scope="col">Type</th>
                    <th scope="col">Status</th>
                    <th scope="col">Findings</th>
                    <th scope="col">Workspace</th>
                  </tr>
                </thead>
                <tbody>
                  {pages
                    .flatMap((p) => p.scans)
                    .map((x) => (
                      <tr key={x.id}>
                        <td>
                          <Link to="/companies/$companyId/scans/$scanId" params={{ companyId, scanId: x.id }}>
                            {formatDate(x.createdAt)}
                          </Link>
                        </td>
                        <td>{x.type}</td>
                        <td>
                          <span className={`chip scan-${x.status}`}>{x.status}</span>
                          {x.error ? <span className="muted small"> {x.error.message}</span> : null}
                        </td>
                        <td>{x.status === 'completed' ? x.findingsCount : '—'}</td>
                        <td>
                          <WorkspaceWithOverview companyId={companyId} workspaceId={x.workspaceId} />
                        </td>
                      </tr>
                    ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Async>
      {scans.hasNextPage && (
        <button type="button" onClick={() => void scans.fetchNextPage()} disabled={scans.isFetchingNextPage}>
          {scans.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      )}
    </section>
  );
}

/** New scan: choose an archive or a folder, upload it with progress, pick the type, start. */
export function NewScan({ companyId }: { companyId: string }) {
  sessionState.companyId = companyId;
  const navigate = useNavigate();
  const credits = useQuery({
    queryKey: ['credits', companyId],
    queryFn: () => unwrap(api.GET('/api/scanner/v1/credits')),
  });
  const [type, setType] = useState<ScanType>('standard');
  const [archive, setArchive] = useState<File | null>(null);
  const [folder, setFolder] = useState<File[] | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [stage, setStage] = useState('');
  const start = useMutation({
    mutationFn: async () => {
      setStage('Packing…');
      const body =
        archive ??
        (folder
          ? await tarGzip(
              folder.map((f) => ({
                path: (f.webkitRelativePath || f.name).split('/').slice(1).join('/') || f.name,
                file: f,
              })),
            )
          : null);
      if (!body) throw new Error('Choose an archive or a folder first.');
      if (type !== UPLOAD_SCAN_TYPE) throw new Error('Uploaded sources are scanned with the standard type.');
      const filename = archive?.name ?? 'folder.tar.gz';
      setStage('Preparing the upload…');
      const sha256 = await sha256Hex(body);
      const session = await unwrap(
        api.POST('/api/scanner/v1/source-uploads', {
          body: {
            workspace: { name: filename.replace(/\.(tar\.gz|tgz)$/, '') },
            archives: [{ filename, sizeBytes: body.size }],
          },
        }),
      );
      const upload = session.uploads[0]!;
      setStage('Uploading…');
      setProgress(0);
      await putWithProgress(upload.uploadUrl, upload.headers, body, setProgress);
      setStage('Checking the archive…');
      const done = await unwrap(
        api.POST('/api/scanner/v1/source-uploads/{uploadId}/complete', {
          params: { path: { uploadId: upload.uploadId } },
          body: { sha256 },
        }),
      );
      setStage('Starting the scan…');
      const scan = await unwrap(
        api.POST('/api/scanner/v1/scans', {
          params: { header: { 'idempotency-key': crypto.randomUUID() } },
          body: {
            type,
            workspaceId: session.workspaceId,
            scanSources: [{ kind: 'local', archiveId: done.archiveId, sha256: done.sha256 }],
          },
        }),
      );
      await navigate({ to: '/companies/$companyId/scans/$scanId', params: { companyId, scanId: scan.id } });
    },
    onSettled: () => setStage(''),
  });
  return (
    <section aria-labelledby="scan-h">
      <h2 id="scan-h">New scan</h2>
      <Async query={credits}>
        {(c) => (
          <p data-testid="credits">
            Credits: <strong>{c.remaining}</strong> remaining ({c.purchased} purchased, {c.used} used,{' '}
            {c.reserved} reserved)
          </p>
        )}
      </Async>
      <form
        className="stack"
        onSubmit={(e) => {
          e.preventDefault();
          start.mutate();
        }}
      >
        <fieldset>
          <legend>Scan type</legend>
          {(['lite', 'standard', 'audit'] as const).map((t) => {
            const info = credits.data?.scanTypes[t];
            // An uploaded archive is local source, which the API scans with the standard type only.
            const uploadable = t === UPLOAD_SCAN_TYPE;
            return (
              <label key={t}>
                <input
                  type="radio"
                  name="type"
                  value={t}
                  checked={type === t}
                  disabled={!uploadable}
                  aria-describedby="scan-type-help"
                  onChange={() => setType(t)}
                />{' '}
                {t}
                {!uploadable && <span className="muted"> · not for uploads</span>}
                {info && (
                  <span className="muted">
                    {' '}
                    · costs {info.cost} credit{info.cost === 1 ? '' : 's'}
                    {!info.available && info.reason ? ` · ${info.reason}` : ''}
                  </span>
                )}
              </label>
            );
          })}
          <p className="muted small" id="scan-type-help">
            Uploaded archives and folders are scanned with the standard type; lite and audit scans need a
            connected source repository.
          </p>
        </fieldset>
        <label>
          Archive (.tar.gz)
          <input
            type="file"
            accept=".tar.gz,.tgz,application/gzip"
            onChange={(e) => {
              setArchive(e.target.files?.[0] ?? null);
              setFolder(null);
            }}
          />
        </label>
        <label>
          or a folder
          <input
            type="file"
            // @ts-expect-error: non-standard attribute for folder selection, supported by browsers
            webkitdirectory=""
            multiple
            onChange={(e) => {
              setFolder(e.target.files ? [...e.target.files] : null);
              setArchive(null);
            }}
          />
        </label>
        <button type="submit" disabled={start.isPending}>
          Upload and scan
        </button>
        {stage && (
          <p role="status">
            {stage}{' '}
            {progress !== null && (
              <progress max={1} value={progress} aria-label="Upload progress">
                {Math.round(progress * 100)}%
              </progress>
            )}
          </p>
        )}
        {start.error ? <ErrorMessage error={start.error} /> : null}
      </form>
      <CompanyScans companyId={companyId} />
    </section>
  );
}

/** A scan: live status, threat model, findings with their code, report downloads. */
export function ScanPage() {
  const { companyId, scanId } = useParams({ from: '/companies/$companyId/scans/$scanId' });
  sessionState.companyId = companyId;
  const scan = useQuery({
    queryKey: ['scan', companyId, scanId],
    queryFn: () => unwrap(api.GET('/api/scanner/v1/scans/{scanId}', { params: { path: { scanId } } })),
    refetchInterval: (q) => (q.state.data && FINAL.has(q.state.data.status) ? false : 1000),
  });
  const completed = scan.data?.status === 'completed';
  const threat = useQuery({
    queryKey: ['threat-model', scanId],
    enabled: Boolean(scan.data && scan.data.status !== 'preparing'),
    // The Markdown rendering reads better than the JSON model; the same operation serves both.
    queryFn: async () => {
      const res = await fetch(`/api/scanner/v1/scans/${scanId}/threat-model`, {
        headers: { ...sessionHeaders(false), accept: 'text/markdown' },
        credentials: 'same-origin',
      });
      if (!res.ok) {
        const body = (await res.json().catch(() => ({}))) as { error?: string; code?: string };
        throw new ApiError(body.error ?? res.statusText, res.status, body.code ?? null);
      }
      return res.text();
    },
  });
  const [downloadError, setDownloadError] = useState<unknown>(null);
  const download = async (format: 'sast' | 'sarif') => {
    setDownloadError(null);
    try {
      const res = await fetch(
        `/api/scanner/v1/scans/${scanId}/findings${format === 'sarif' ? '?format=sarif' : ''}`,
        {
          headers: sessionHeaders(false),
          credentials: 'same-origin',
        },
      );
      if (!res.ok)
        throw new ApiError(
          ((await res.json()) as { error?: string }).error ?? res.statusText,
          res.status,
          null,
        );
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = `scan-${scanId}.${format === 'sarif' ? 'sarif' : 'sast'}.json`;
      a.click();
      URL.revokeObjectURL(url);
    } catch (err) {
      setDownloadError(err);
    }
  };
  if (scan.error instanceof ApiError && scan.error.status === 404) return <NotFound />;
  return (
    <section>
      <p>
        <Link to="/companies/$companyId/$section" params={{ companyId, section: 'scans' }}>
          ← Scans
        </Link>
      </p>
      <Async query={scan}>
        {(s) => (
          <>
            <h1>
              {s.type} scan{' '}
              <span className={`chip scan-${s.status}`} data-testid="scan-status">
                {s.status}
              </span>
            </h1>
            <dl className="facts">
              <dt>Created</dt>
              <dd>{formatDate(s.createdAt)}</dd>
              <dt>Started</dt>
              <dd>{formatDate(s.startedAt)}</dd>
              <dt>Completed</dt>
              <dd>{formatDate(s.completedAt)}</dd>
              <dt>Files</dt>
              <dd>
                {s.progress.filesDone} / {s.progress.filesTotal}{' '}
                {!FINAL.has(s.status) && (
                  <progress
                    max={s.progress.filesTotal || 1}
                    value={s.progress.filesDone}
                    aria-label="Scan progress"
                  />
                )}
              </dd>
              <dt>Findings</dt>
              <dd>{s.findingsCount ?? '—'}</dd>
              <dt>Workspace</dt>
              <dd>
                <WorkspaceWithOverview companyId={companyId} workspaceId={s.workspaceId} />
              </dd>
            </dl>
            {s.error && <ErrorMessage error={new ApiError(s.error.message, 0, s.error.code)} />}
          </>
        )}
      </Async>
      {completed && (
        <div className="button-row">
          <button type="button" onClick={() => void download('sast')}>
            Download SAST report
          </button>
          <button type="button" onClick={() => void download('sarif')}>
            Download SARIF
          </button>
        </div>
      )}
      {downloadError ? <ErrorMessage error={downloadError} /> : null}
      <h2>Threat model</h2>
      {threat.error instanceof ApiError && threat.error.code === 'THREAT_MODEL_NOT_READY' ? (
        <p className="muted">Being built…</p>
      ) : (
        <Async query={threat}>
          {(markdown) => <Markdown source={markdown} className="description threat-model" />}
        </Async>
      )}
      <h2>Findings</h2>
      {!completed ? (
        <p className="muted">Shown when the scan has completed.</p>
      ) : (
        <ScanDrafts
          companyId={companyId}
          scanId={scanId}
          details={(id) => <ScanFindingTickets findingId={id} companyId={companyId} />}
        />
      )}
    </section>
  );
}

function ScanFindingTickets({ findingId, companyId }: { findingId: string; companyId: string }) {
  const [open, setOpen] = useState(false);
  const trackers = useConnectedTrackers(companyId);
  if (!trackers.data?.items.length) return null;
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Tickets…
      </button>
    );
  return <LazyTickets findingId={findingId} companyId={companyId} />;
}

function LazyTickets(props: { findingId: string; companyId: string }) {
  const mod = useQuery({
    queryKey: ['module', 'finding'],
    queryFn: () => import('./finding.tsx'),
    staleTime: Infinity,
  });
  if (!mod.data) return <p className="muted">Loading…</p>;
  const { Tickets } = mod.data;
  return <Tickets {...props} />;
}
