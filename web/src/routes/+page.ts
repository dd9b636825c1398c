import { redirect } from '@sveltejs/kit';
// The approver's home is the inbox.
export function load() {
  redirect(307, '/approvals');
}
