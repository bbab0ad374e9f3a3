// postject ships no type declarations; this is the part of its API the build uses.
declare module "postject" {
  export function inject(
    filename: string,
    resourceName: string,
    resourceData: Uint8Array,
    options?: { sentinelFuse?: string; machoSegmentName?: string; overwrite?: boolean },
  ): Promise<void>;
}
