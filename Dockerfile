FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# The web console's sources: npm install builds them into web/dist (prepare).
COPY web ./web
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force
COPY tsconfig.json ./
COPY src ./src
COPY schema ./schema
COPY bin ./bin
USER node
EXPOSE 8080 4317
CMD ["npm", "start"]
