// The types of grw-sdk.js, for editors and TypeScript: tsc generates them
// from the SDK's JSDoc into types/ (see README.md, "Types").
export * from "./types/grw-sdk.js";
