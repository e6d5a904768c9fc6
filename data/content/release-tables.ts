/** The release tables (migration 036), named apart so revision retention can keep what a release names. */
export const RELEASE_TABLE = 'content.release';
export const RELEASE_ITEM_TABLE = 'content.release_item';
