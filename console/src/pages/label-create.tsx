import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState } from 'react';
import { api, unwrap } from '../api.ts';
import { ErrorMessage } from '../ui.tsx';

/**
 * Creates a label of the repository and puts it on the finding (repository admins: the server's
 * `repository.manage_labels`). Reviewer visibility and use are chosen here, off by default.
 */
export function CreateLabel({
  repositoryId,
  onCreated,
}: {
  repositoryId: string;
  onCreated: (id: string) => void;
}) {
  const id = useId();
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const create = useMutation({
    mutationFn: (body: { name: string; reviewerRead: boolean; reviewerUse: boolean }) =>
      unwrap(
        api.POST('/api/v0/repositories/{repo_id}/labels', {
          params: { path: { repo_id: repositoryId } },
          body,
        }),
      ),
    onSuccess: async (label) => {
      await client.invalidateQueries({ queryKey: ['labels', repositoryId] });
      setOpen(false);
      onCreated(label.id);
    },
  });
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        New label…
      </button>
    );
  return (
    <form
      className="stack confirm"
      aria-label="New label"
      onSubmit={(e) => {
        e.preventDefault();
        const f = new FormData(e.currentTarget);
        create.mutate({
          name: String(f.get('name') ?? '').trim(),
          reviewerRead: f.get('reviewerRead') === 'on',
          reviewerUse: f.get('reviewerUse') === 'on',
        });
      }}
    >
      <label htmlFor={`${id}-name`}>Label name</label>
      <input id={`${id}-name`} name="name" required maxLength={100} />
      <label>
        <input type="checkbox" name="reviewerRead" /> Reviewers see it
      </label>
      <label>
        <input type="checkbox" name="reviewerUse" /> Reviewers may use it
      </label>
      <div className="button-row">
        <button type="submit" disabled={create.isPending}>
          Create and add
        </button>
        <button type="button" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
      {create.error ? <ErrorMessage error={create.error} /> : null}
    </form>
  );
}
