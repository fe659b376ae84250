/*
 * u8_counter_microbench.c - same-process timing of three u8 histogram inner
 * loops on 4096^2 random, constant and natural-looking images (best of 15):
 * A byte loads (the old hist.sub loop), B two 8-byte loads per 16 samples
 * (adopted), C B plus a test for 16 equal bytes. Build and run:
 * gcc -O2 u8_counter_microbench.c -lm && ./a.out (docs/benchmarks.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec*1e-6;}
#define N (4096*4096)
#define B8 0x0101010101010101ULL
__attribute__((noinline)) static void runA(const uint8_t *s_, size_t n_, uint32_t *t0_, uint32_t *t1_, uint32_t *t2_, uint32_t *t3_){
  for (size_t i_=0; i_ + 4 <= n_; i_ += 4) { if ((i_ & 15) == 0) __builtin_prefetch(s_ + i_ + 4096);
    size_t a_ = s_[i_], b_ = s_[i_ + 1], c_ = s_[i_ + 2], d_ = s_[i_ + 3];
    t0_[a_]++; t1_[b_]++; t2_[c_]++; t3_[d_]++; }}
__attribute__((noinline)) static void runB(const uint8_t *s, size_t n, uint32_t *t0, uint32_t *t1, uint32_t *t2, uint32_t *t3){
  for (size_t i=0; i + 16 <= n; i += 16) { if ((i & 63) == 0) __builtin_prefetch(s + i + 4096);
    uint64_t w,v; memcpy(&w,s+i,8); memcpy(&v,s+i+8,8);
    t0[w&255]++;t1[v&255]++;t2[(w>>8)&255]++;t3[(v>>8)&255]++;
    t0[(w>>16)&255]++;t1[(v>>16)&255]++;t2[(w>>24)&255]++;t3[(v>>24)&255]++;
    t0[(w>>32)&255]++;t1[(v>>32)&255]++;t2[(w>>40)&255]++;t3[(v>>40)&255]++;
    t0[(w>>48)&255]++;t1[(v>>48)&255]++;t2[w>>56]++;t3[v>>56]++; }}
__attribute__((noinline)) static void runC(const uint8_t *s, size_t n, uint32_t *t0, uint32_t *t1, uint32_t *t2, uint32_t *t3){
  for (size_t i=0; i + 16 <= n; i += 16) { if ((i & 63) == 0) __builtin_prefetch(s + i + 4096);
    uint64_t w,v; memcpy(&w,s+i,8); memcpy(&v,s+i+8,8);
    if (w == (v & 255) * B8 && v == w) { t0[w&255] += 16; continue; }
    t0[w&255]++;t1[v&255]++;t2[(w>>8)&255]++;t3[(v>>8)&255]++;
    t0[(w>>16)&255]++;t1[(v>>16)&255]++;t2[(w>>24)&255]++;t3[(v>>24)&255]++;
    t0[(w>>32)&255]++;t1[(v>>32)&255]++;t2[(w>>40)&255]++;t3[(v>>40)&255]++;
    t0[(w>>48)&255]++;t1[(v>>48)&255]++;t2[w>>56]++;t3[v>>56]++; }}
int main(void){
  uint8_t *img[3]; for(int k=0;k<3;k++) img[k]=aligned_alloc(64,N);
  uint64_t s=0x9E3779B97F4A7C15ULL|1; for(size_t i=0;i<N;i+=8){s^=s>>12;s^=s<<25;s^=s>>27;uint64_t v=s*0x2545F4914F6CDD1DULL;memcpy(img[0]+i,&v,8);}
  memset(img[1],77,N);
  for(size_t y=0;y<4096;y++)for(size_t x=0;x<4096;x++){ double v=128+50*sin(x*0.004+y*0.002)+40*cos(y*0.006)*sin(x*0.0011); img[2][y*4096+x]=(uint8_t)(v+(img[0][y*4096+x]&3)); }
  uint32_t *t=calloc(4*256,4); const char*nm[]={"random","const","natural"};
  void (*f[3])(const uint8_t*,size_t,uint32_t*,uint32_t*,uint32_t*,uint32_t*)={runA,runB,runC};
  for(int rep=0;rep<2;rep++) for(int k=0;k<3;k++){ printf("%-8s",nm[k]); for(int m=0;m<3;m++){ double b=1e9;
   for(int r=0;r<15;r++){ memset(t,0,4096); double a=now(); f[m](img[k],N,t,t+256,t+512,t+768); a=now()-a; if(a<b)b=a;}
   uint64_t sum=0; for(int j=0;j<1024;j++) sum+=t[j]; printf("  %c %.3f ms%s",'A'+m,b,sum==N?"":"(BAD)");} printf("\n");}
}
