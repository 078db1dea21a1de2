export {};
//# sourceMappingURL=messages.js.map