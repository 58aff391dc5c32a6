# An n-gram language model with nn.Embedding, log_softmax and NLLLoss (the NLP tutorial's).
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

CONTEXT_SIZE = 2
EMBEDDING_DIM = 5
text = "the quick brown fox jumps over the lazy dog and the quick cat sleeps".split()
ngrams = [
    ([text[i - j - 1] for j in range(CONTEXT_SIZE)], text[i])
    for i in range(CONTEXT_SIZE, len(text))
]
vocab = sorted(set(text))
word_to_ix = {word: i for i, word in enumerate(vocab)}
rng = np.random.default_rng(8)


class NGramLanguageModeler(nn.Module):
    def __init__(self, vocab_size, embedding_dim, context_size):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.linear1 = nn.Linear(context_size * embedding_dim, 16)
        self.linear2 = nn.Linear(16, vocab_size)

    def forward(self, inputs):
        embeds = self.embeddings(inputs).view((1, -1))
        out = F.relu(self.linear1(embeds))
        return F.log_softmax(self.linear2(out), dim=1)


losses = []
loss_function = nn.NLLLoss()
model = NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)), dtype=torch.float32))
optimizer = optim.SGD(model.parameters(), lr=0.05)
for epoch in range(4):
    total_loss = 0
    for context, target in ngrams:
        context_idxs = torch.tensor([word_to_ix[w] for w in context], dtype=torch.long)
        model.zero_grad()
        log_probs = model(context_idxs)
        loss = loss_function(log_probs, torch.tensor([word_to_ix[target]], dtype=torch.long))
        loss.backward()
        optimizer.step()
        total_loss += loss.item()
    losses.append(total_loss)
print([round(l, 5) for l in losses])
print(model.embeddings.weight[word_to_ix["fox"]])
