// Types of bundle.mjs, for src/bundle.test.ts.

export interface BundleFile {
  file: string;
  bytes: number;
  gzip: number;
}

export interface CustomerBundle {
  files: BundleFile[];
  bytes: number;
  gzip: number;
  budget: number;
  later: BundleFile[];
  laterGzip: number;
}

export const budgetBytes: number;
export function customerBundle(dist: string): CustomerBundle;
