import { UniqueIntegrityConstraintViolationError } from 'slonik';

/** A unique constraint said no: the domain answers `conflict` (DESIGN.md §6). */
export function isUniqueViolation(err: unknown): boolean {
  return err instanceof UniqueIntegrityConstraintViolationError;
}
